/** The callback a creation request leads to, as an OpenAPI `callbacks` entry (docs/integration.md §5). */

const CallbackBody = {
  type: 'object',
  required: ['payment_id', 'merchant_order_no', 'amount', 'currency', 'status', 'utr'],
  properties: {
    payment_id: { type: 'string' },
    merchant_order_no: { type: 'string' },
    amount: {
      type: 'number',
      description: 'Written with exactly two decimals (500.00); sign this text as it appears.',
    },
    currency: { type: 'string' },
    status: {
      type: 'string',
      enum: ['SUCCESS', 'FAILED', 'REVERSED'],
      description: 'REVERSED: a second callback for a SUCCESS payout whose money the bank sent back',
    },
    utr: { type: 'string' },
  },
};

/**
 * Sent to the request's callback_url (else the merchant's default) once the transaction is final.
 * Only HTTP 200 counts as delivered; anything else is retried CALLBACK_MAX_RETRIES times.
 */
export const CALLBACKS = {
  finalStatus: {
    '{$request.body#/callback_url}': {
      post: {
        requestBody: {
          required: true,
          description:
            'Final status of the transaction. Headers: X-Verification-Token = lowercase hex HMAC-SHA256 of ' +
            'payment_id:amount:status with your webhook secret; X-Callback-Attempt = 1, 2, …; ' +
            'User-Agent = paygate-callback/VERSION.',
          content: { 'application/json': { schema: CallbackBody } },
        },
        responses: {
          200: { description: 'Delivered. Any other answer is retried.' },
          '4XX': { description: 'Not delivered: retried CALLBACK_MAX_RETRIES times, then failed.' },
        },
      },
    },
  },
};

const RefundCallbackBody = {
  type: 'object',
  required: ['refund_id', 'payment_id', 'merchant_refund_no', 'amount', 'currency', 'status', 'utr'],
  properties: {
    refund_id: { type: 'string' },
    payment_id: { type: 'string', description: 'The refunded pay-in.' },
    merchant_refund_no: { type: 'string' },
    amount: {
      type: 'number',
      description: 'Written with exactly two decimals (100.00); sign this text as it appears.',
    },
    currency: { type: 'string' },
    status: { type: 'string', enum: ['SUCCESS', 'FAILED'] },
    utr: { type: 'string', description: 'The bank reference of the refund, or "" when there is none.' },
  },
};

/**
 * Sent to the refund's callback_url, else the pay-in's, else the merchant's default, once the
 * refund is final. Retried as every callback is.
 */
export const REFUND_CALLBACKS = {
  refundFinalStatus: {
    '{$request.body#/callback_url}': {
      post: {
        requestBody: {
          required: true,
          description:
            'Final status of the refund. Headers: X-Verification-Token = lowercase hex HMAC-SHA256 of ' +
            'refund_id:amount:status with your webhook secret; X-Callback-Attempt = 1, 2, …; ' +
            'User-Agent = paygate-callback/VERSION.',
          content: { 'application/json': { schema: RefundCallbackBody } },
        },
        responses: {
          200: { description: 'Delivered. Any other answer is retried.' },
          '4XX': { description: 'Not delivered: retried CALLBACK_MAX_RETRIES times, then failed.' },
        },
      },
    },
  },
};
