/** `merchant …` and `key rotate`: merchants, their status and their credentials. */
import { buildServices } from '../services.ts';
import { callbackUrlProblem, vpaProblem } from '../merchants/merchants.service.ts';
import {
  audit,
  istText,
  MERCHANT,
  required,
  table,
  UsageError,
  withDatabase,
  withIstDates,
  type CommandSpec,
} from './command.ts';

/** `merchant disable` and `merchant enable`. */
const setStatus: CommandSpec['run'] = async ({ command, config, flags, out, actor }) => {
  const status = command === 'merchant disable' ? 'disabled' : 'active';
  const m = await withDatabase(config, async (d) => {
    const changed = await buildServices(config, d).merchants.setStatus(required(flags, 'merchant'), status);
    await audit(
      d,
      actor,
      command === 'merchant disable' ? 'disable' : 'enable',
      changed.merchant_id,
      `${status === 'active' ? 'enabled' : 'disabled'} the merchant`,
    );
    return changed;
  });
  out(withIstDates(m, ['created_at']), `${m.merchant_id} is ${m.status}`);
  return 0;
};

export const MERCHANT_COMMANDS: Record<string, CommandSpec> = {
  'merchant create': {
    summary: 'create a merchant; its API key and webhook secret are shown once',
    options: {
      name: {
        type: 'string',
        value: 'NAME',
        help: 'the name customers see (1 to 100 characters)',
        required: true,
      },
      'callback-url': {
        type: 'string',
        value: 'URL',
        help: 'default callback URL (https, at most 512 characters)',
      },
      vpa: {
        type: 'string',
        value: 'VPA',
        help: 'the UPI id pay-ins are paid to, handle@psp (required with --live: its own id under the Setu merchant)',
      },
      live: { type: 'boolean', help: 'a live merchant (sk_live_ key) instead of a sandbox one' },
      'setu-vpa-id': {
        type: 'string',
        value: 'ID',
        help: "with --live: the id under which Setu already holds --vpa for Paygate's Setu merchant",
      },
    },
    async run({ config, flags, out, actor }) {
      const name = required(flags, 'name');
      if (name.length > 100) throw new UsageError('--name must be at most 100 characters');
      const callbackUrl = flags['callback-url'] as string | undefined;
      const urlProblem =
        callbackUrl === undefined ? null : callbackUrlProblem(callbackUrl, config.allowPrivateCallbackUrls);
      if (urlProblem) throw new UsageError(`--callback-url: ${urlProblem}`);
      const vpa = flags.vpa as string | undefined;
      const problem = vpaProblem(vpa ?? null, Boolean(flags.live));
      if (problem) throw new UsageError(`--vpa: ${problem}`);
      const setuVpaId = flags['setu-vpa-id'] as string | undefined;
      if (setuVpaId !== undefined && !flags.live) throw new UsageError('--setu-vpa-id needs --live');
      if (setuVpaId !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(setuVpaId))
        throw new UsageError('--setu-vpa-id: not an id Setu gives (letters, digits, - and _)');
      // A live merchant's UPI id is registered with Setu first (the service refuses one without
      // Setu, LIVE_CHANNEL_NOT_CONFIGURED): the merchant exists only if Setu can route to it.
      const created = await withDatabase(config, async (d) => {
        const made = await buildServices(config, d).merchants.create({
          name,
          callbackUrl,
          vpa: flags.vpa as string | undefined,
          live: Boolean(flags.live),
          setuVpaId,
        });
        await audit(d, actor, 'merchant_create', made.merchant_id, `created ${made.mode} merchant ${name}`);
        return made;
      });
      out(
        { ...created },
        `merchant_id:    ${created.merchant_id}\nmode:           ${created.mode}\napi_key:        ${created.api_key}\nwebhook_secret: ${created.webhook_secret}\n(the key and secret are shown once)`,
      );
      return 0;
    },
  },
  'merchant list': {
    summary: 'every merchant, with its mode and status',
    options: {},
    async run({ config, out }) {
      const merchants = await withDatabase(config, (d) => buildServices(config, d).merchants.list());
      out(
        { merchants: merchants.map((m) => withIstDates(m, ['created_at'])) },
        merchants.length
          ? table(
              ['MERCHANT_ID', 'MODE', 'STATUS', 'NAME'],
              merchants.map((m) => [m.merchant_id, m.mode, m.status, m.name]),
            )
          : 'no merchants',
      );
      return 0;
    },
  },
  'merchant disable': {
    summary: "stop a merchant's API key (403 MERCHANT_DISABLED)",
    options: MERCHANT,
    run: setStatus,
  },
  'merchant enable': { summary: 'let a disabled merchant in again', options: MERCHANT, run: setStatus },
  'merchant rotate-secret': {
    summary: 'issue a new webhook secret',
    options: {
      ...MERCHANT,
      'no-overlap': {
        type: 'boolean',
        help: 'delete the old secret at once instead of letting it sign beside the new one (WEBHOOK_SECRET_OVERLAP_S)',
      },
    },
    async run({ config, flags, out, actor }) {
      const overlap = !flags['no-overlap'];
      const r = await withDatabase(config, async (d) => {
        const merchants = buildServices(config, d).merchants;
        const rotated = await merchants.rotateSecret(required(flags, 'merchant'), { overlap });
        await audit(
          d,
          actor,
          'rotate_secret',
          rotated.merchant_id,
          overlap ? 'rotated the webhook secret' : 'rotated the webhook secret; the old one deleted at once',
        );
        return rotated;
      });
      const previous = r.previous_secret_until
        ? `, and with the previous one beside it until ${istText(r.previous_secret_until)}`
        : '; the previous one is deleted';
      out(
        withIstDates(r, ['previous_secret_until']),
        `webhook_secret: ${r.webhook_secret}\n(shown once; callbacks are signed with it from now on${previous})`,
      );
      return 0;
    },
  },
  'key rotate': {
    summary: 'issue a new API key; the old one stops working',
    options: MERCHANT,
    async run({ config, flags, out, actor }) {
      const r = await withDatabase(config, async (d) => {
        const rotated = await buildServices(config, d).merchants.rotateKey(required(flags, 'merchant'));
        await audit(d, actor, 'rotate_key', rotated.merchant_id, 'rotated the API key');
        return rotated;
      });
      out({ ...r }, `api_key: ${r.api_key}\n(shown once; the previous key no longer works)`);
      return 0;
    },
  },
};
