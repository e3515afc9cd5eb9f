/** `user …`: the people who sign in to the console. */
import { AccountService, EMAIL, PASSWORD_MAX, PASSWORD_MIN } from '../dashboard/accounts.service.ts';
import { UserService, type UserView } from '../dashboard/users.service.ts';
import { buildServices } from '../services.ts';
import {
  istText,
  required,
  table,
  UsageError,
  withDatabase,
  withIstDates,
  type CommandSpec,
  type Flags,
} from './command.ts';

/** The password piped to `--password-stdin`, without its final line break. */
async function readPassword(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (text.length < PASSWORD_MIN || text.length > PASSWORD_MAX)
    throw new UsageError(
      `the password on standard input must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`,
    );
  return text;
}

/** `--email`, refused as a usage error (exit 2) when it is not an address (CONTRACT §1). */
function emailFlag(flags: Flags): string {
  const email = required(flags, 'email');
  if (email.length > 254 || !EMAIL.test(email.trim().toLowerCase()))
    throw new UsageError(`--email must be an address such as ops@example.com, not "${email}"`);
  return email;
}

const EMAIL_OPTION = {
  email: { type: 'string', value: 'EMAIL', help: 'the address the user signs in with', required: true },
} as const;
const PASSWORD_STDIN = {
  'password-stdin': {
    type: 'boolean',
    help: `read the password from standard input (${PASSWORD_MIN} to ${PASSWORD_MAX} characters) instead of generating one`,
  },
} as const;

function userLine(u: UserView): string {
  return `${u.email}: ${u.status} (${u.role}${u.merchant_id ? ` of ${u.merchant_id}` : ''})`;
}

/** `user disable` and `user enable`: the same command but for what it sets. */
function statusCommand(disabled: boolean): CommandSpec {
  return {
    summary: disabled
      ? 'stop a user signing in; their open sessions end at once'
      : 'let a disabled user sign in again',
    options: { ...EMAIL_OPTION },
    async run({ config, flags, out, actor }) {
      const email = emailFlag(flags);
      const user = await withDatabase(config, (d) =>
        new UserService(d.db).setDisabled({ email: actor, userId: null }, { email }, disabled),
      );
      out(withIstDates(user, ['created_at']), userLine(user));
      return 0;
    },
  };
}

export const USER_COMMANDS: Record<string, CommandSpec> = {
  'user create': {
    summary: 'create a dashboard user (--merchant ID or --operator); a generated password is shown once',
    options: {
      ...EMAIL_OPTION,
      merchant: { type: 'string', value: 'ID', help: 'the merchant whose data the user sees' },
      operator: { type: 'boolean', help: 'an operator, who sees every merchant' },
      ...PASSWORD_STDIN,
    },
    async run({ config, flags, out, actor }) {
      const email = emailFlag(flags);
      const merchantId = flags.merchant as string | undefined;
      if ((merchantId === undefined) === !flags.operator)
        throw new UsageError('user create needs exactly one of --merchant ID and --operator');
      const password = flags['password-stdin'] ? await readPassword() : null;
      const created = await withDatabase(config, (d) =>
        new AccountService(d.db).createUser({
          email,
          role: flags.operator ? 'operator' : 'merchant',
          merchantId: merchantId ?? null,
          password,
          actor,
        }),
      );
      out(
        { ...created },
        `user_id:  ${created.user_id}\nemail:    ${created.email}\nrole:     ${created.role}${created.merchant_id ? `\nmerchant: ${created.merchant_id}` : ''}${created.password ? `\npassword: ${created.password}\n(shown once; sign in at /dashboard)` : ''}`,
      );
      return 0;
    },
  },
  'user list': {
    summary: "every dashboard user, or a merchant's, with role and status",
    options: { merchant: { type: 'string', value: 'ID', help: "only this merchant's users" } },
    async run({ config, flags, out }) {
      const merchantId = (flags.merchant as string | undefined) ?? null;
      const users = await withDatabase(config, async (d) => {
        // An unknown merchant is refused rather than shown as a merchant without users.
        if (merchantId !== null) await buildServices(config, d).merchants.get(merchantId);
        return new UserService(d.db).list(merchantId);
      });
      out(
        { users: users.map((u) => withIstDates(u, ['created_at'])) },
        users.length === 0
          ? 'no users'
          : table(
              ['USER_ID', 'EMAIL', 'ROLE', 'MERCHANT', 'STATUS', 'CREATED'],
              users.map((u) => [
                u.user_id,
                u.email,
                u.role,
                u.merchant_id ?? '-',
                u.status,
                istText(u.created_at),
              ]),
            ),
      );
      return 0;
    },
  },
  'user disable': statusCommand(true),
  'user enable': statusCommand(false),
  'user reset-password': {
    summary: "set a user's new password (a generated one is shown once); every session of theirs ends",
    options: { ...EMAIL_OPTION, ...PASSWORD_STDIN },
    async run({ config, flags, out, actor }) {
      const email = emailFlag(flags);
      const password = flags['password-stdin'] ? await readPassword() : null;
      const r = await withDatabase(config, (d) =>
        new UserService(d.db).resetPassword(actor, { email }, password),
      );
      out(
        { ...r },
        `email:    ${r.email}\n${r.password ? `password: ${r.password}\n(shown once; every session of this user has ended)` : 'password set; every session of this user has ended'}`,
      );
      return 0;
    },
  },
};
