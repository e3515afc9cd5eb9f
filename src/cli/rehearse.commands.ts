/**
 * `channels rehearse` (CONTRACT §1): ₹1 through each live step before the first merchant, with a
 * serving process running at PUBLIC_URL (`rehearsal.ts` says why and how).
 */
import { base62 } from '../ids.ts';
import { AppError } from '../errors.ts';
import { vpaProblem } from '../merchants/merchants.service.ts';
import { buildServices } from '../services.ts';
import {
  audit,
  CommandRefusal,
  MERCHANT,
  required,
  UsageError,
  withDatabase,
  type CommandSpec,
} from './command.ts';
import { rehearse, type StepReport } from './rehearsal.ts';

const ACCOUNT_NO = /^[0-9]{9,18}$/;
const IFSC = /^[A-Z]{4}0[A-Z0-9]{6}$/;
const MAX_WAIT_S = 86_400;

function waitS(value: string | boolean | undefined): number {
  if (value === undefined) return 600;
  if (typeof value !== 'string' || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_WAIT_S)
    throw new UsageError(
      `channels rehearse: --wait-s must be a whole number of seconds from 1 to ${MAX_WAIT_S}`,
    );
  return Number(value);
}

/** The payout's receiver from the options: an account and IFSC (a UPI id is not a payout receiver yet). */
function receiverOf(flags: Record<string, string | boolean | undefined>): {
  account_no: string;
  ifsc_code: string;
} {
  const account = flags['payout-account'] as string | undefined;
  const ifsc = flags.ifsc as string | undefined;
  const vpa = flags['payout-vpa'] as string | undefined;
  if ((account === undefined) === (vpa === undefined))
    throw new UsageError('channels rehearse: give either --payout-account N --ifsc C or --payout-vpa V');
  if (vpa !== undefined) {
    const problem = vpaProblem(vpa, false);
    if (problem) throw new UsageError(`--payout-vpa: ${problem}`);
    if (ifsc !== undefined) throw new UsageError('channels rehearse: --ifsc goes with --payout-account');
    throw new CommandRefusal(
      'INVALID_STATE',
      'payouts to UPI ids are not available in this version; rehearse with --payout-account N --ifsc C',
    );
  }
  if (!ACCOUNT_NO.test(account!)) throw new UsageError('--payout-account must be 9 to 18 digits');
  if (ifsc === undefined) throw new UsageError('channels rehearse: --payout-account needs --ifsc');
  if (!IFSC.test(ifsc)) throw new UsageError('--ifsc must be an IFSC such as HDFC0001234');
  return { account_no: account!, ifsc_code: ifsc };
}

function humanReport(id: string, steps: StepReport[]): string {
  const lines = steps.map((s) => {
    const refs = Object.entries(s.references)
      .filter(([, v]) => v !== null && v !== '')
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    return `${s.step.padEnd(7)} ${s.status.padEnd(8)} ${s.detail}${refs ? `\n        ${refs}` : ''}`;
  });
  return [`rehearsal ${id}`, ...lines].join('\n');
}

/** Whether a serving process answers at PUBLIC_URL: the providers' notifications reach only it. */
async function servingAt(publicUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${publicUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

export const REHEARSE_COMMANDS: Record<string, CommandSpec> = {
  'channels rehearse': {
    summary: 'move ₹1 through each live step: a pay-in you pay, a top-up, its refund and a payout',
    options: {
      ...MERCHANT,
      'payout-account': {
        type: 'string',
        value: 'N',
        help: 'the account the ₹1 payout goes to (9 to 18 digits)',
      },
      ifsc: { type: 'string', value: 'C', help: "that account's IFSC" },
      'payout-vpa': { type: 'string', value: 'V', help: 'a UPI id for the payout instead of an account' },
      'wait-s': {
        type: 'string',
        value: 'S',
        help: 'how long the QR stays payable, and each step is waited for (default 600)',
      },
    },
    async run({ config, flags, out, actor }) {
      const merchantId = required(flags, 'merchant');
      const receiver = receiverOf(flags);
      const wait = waitS(flags['wait-s']);
      if (!config.setu || !config.cashfree)
        throw new AppError(
          'LIVE_CHANNEL_NOT_CONFIGURED',
          `a rehearsal needs both live channels; not configured: ${[!config.setu && 'Setu (SETU_*)', !config.cashfree && 'Cashfree (CASHFREE_*)'].filter(Boolean).join(', ')}`,
        );
      const say = (line: string) => process.stderr.write(`${line}\n`);
      if (!(await servingAt(config.publicUrl)))
        say(
          `warning: nothing answers at ${config.publicUrl}/healthz; start paygate serve there, or no notification and no send will happen`,
        );
      const rehearsalId = `rh_${base62(16)}`;
      const steps = await withDatabase(config, async (database) => {
        // The pay-in's own expiry is the wait: an unpaid QR is closed by the usual expiry.
        const services = buildServices({ ...config, payinExpiryS: wait }, database);
        const merchant = await services.merchants.get(merchantId);
        if (merchant.mode !== 'live')
          throw new CommandRefusal(
            'INVALID_STATE',
            `${merchantId} is a sandbox merchant; rehearse with a live one`,
          );
        try {
          return await rehearse(
            { rehearsalId, merchantId, receiver: { name: merchant.name, ...receiver }, waitMs: wait * 1000 },
            {
              config,
              database,
              services,
              say,
              audit: (action, id, detail) => audit(database, actor, action, id, detail),
              now: Date.now,
            },
          );
        } finally {
          for (const c of [services.setu, services.cashfree]) await c?.http.close();
        }
      });
      out({ rehearsal_id: rehearsalId, steps }, humanReport(rehearsalId, steps));
      return steps.every((s) => s.status === 'ok') ? 0 : 1;
    },
  },
};
