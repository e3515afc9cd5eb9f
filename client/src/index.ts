/**
 * @paygate/client: the Paygate merchant SDK. `Paygate` calls the API with typed requests,
 * typed errors and safe retries; `verifyCallback` and the handlers check callback signatures.
 */
export { Paygate, type PaygateOptions, type Created, type CallOptions } from './client.js';
export {
  PaygateError,
  PaygateApiError,
  PaygateValidationError,
  PaygateNetworkError,
  PaygateSignatureError,
  type SignatureFailure,
} from './errors.js';
export {
  verifyCallback,
  parseCallback,
  isRefundCallback,
  callbackToken,
  formatCallbackAmount,
  DEFAULT_TOLERANCE_SECONDS,
  type VerifyCallbackInput,
  type SignedFields,
} from './verify.js';
export {
  handleCallback,
  createCallbackHandler,
  paygateCallbackPlugin,
  type CallbackHandlerOptions,
  type CallbackContext,
  type CallbackRequest,
  type CallbackAnswer,
  type FastifyLike,
} from './handler.js';
export type { HeaderBag } from './standard-webhooks.js';
export { OPERATIONS, type Operation, type OperationName } from './operations.js';
export type { Field, FieldType } from './shape.js';
export { SDK_VERSION } from './version.js';
export type * from './types.js';
