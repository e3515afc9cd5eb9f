/** `user …`: the people who sign in to the console. */
import { AccountService, PASSWORD_MAX, PASSWORD_MIN } from '../dashboard/accounts.service.ts';
import { required, UsageError, withDatabase, type CommandSpec } from './command.ts';

/** The password piped to `user create --password-stdin`, without its final line break. */
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

export const USER_COMMANDS: Record<string, CommandSpec> = {
  'user create': {
    summary: 'create a dashboard user (--merchant ID or --operator); a generated password is shown once',
    options: {
      email: { type: 'string', value: 'EMAIL', help: 'the address the user signs in with', required: true },
      merchant: { type: 'string', value: 'ID', help: 'the merchant whose data the user sees' },
      operator: { type: 'boolean', help: 'an operator, who sees every merchant' },
      'password-stdin': {
        type: 'boolean',
        help: `read the password from standard input (${PASSWORD_MIN} to ${PASSWORD_MAX} characters) instead of generating one`,
      },
    },
    async run({ config, flags, out }) {
      const email = required(flags, 'email');
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
        }),
      );
      out(
        { ...created },
        `user_id:  ${created.user_id}\nemail:    ${created.email}\nrole:     ${created.role}${created.merchant_id ? `\nmerchant: ${created.merchant_id}` : ''}${created.password ? `\npassword: ${created.password}\n(shown once; sign in at /dashboard)` : ''}`,
      );
      return 0;
    },
  },
};
