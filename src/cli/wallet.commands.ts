/** `wallet …` and `ledger verify`: balances and the books behind them. */
import { buildServices } from '../services.ts';
import { formatAmount, parseAmountText, toRupees } from '../money.ts';
import {
  audit,
  CURRENCY,
  MERCHANT,
  required,
  UsageError,
  withDatabase,
  type CommandSpec,
} from './command.ts';

export const WALLET_COMMANDS: Record<string, CommandSpec> = {
  'wallet credit': {
    summary: "add money to a merchant's available balance",
    options: {
      ...MERCHANT,
      amount: {
        type: 'string',
        value: 'AMOUNT',
        help: 'rupees, at most 2 decimals, such as 1000.00',
        required: true,
      },
      currency: CURRENCY,
    },
    async run({ config, flags, out, currency, actor }) {
      const merchantId = required(flags, 'merchant');
      const amount = parseAmountText(required(flags, 'amount'));
      if (amount === null || amount <= 0)
        throw new UsageError('--amount must be a positive amount with at most 2 decimals, such as 1000.00');
      const cur = currency();
      const b = await withDatabase(config, async (d) => {
        const s = buildServices(config, d);
        await s.merchants.get(merchantId);
        const balance = await s.wallets.topUp(merchantId, cur, amount);
        await audit(d, actor, 'credit', merchantId, `credited ${formatAmount(amount)} ${cur}`);
        return balance;
      });
      out(
        {
          merchant_id: merchantId,
          credited: toRupees(amount),
          currency: b.currency,
          available: toRupees(b.available),
          held: toRupees(b.held),
        },
        `credited ${formatAmount(amount)} ${b.currency}; available ${formatAmount(b.available)}, held ${formatAmount(b.held)}`,
      );
      return 0;
    },
  },
  'wallet show': {
    summary: "a merchant's available and held balance",
    options: { ...MERCHANT, currency: CURRENCY },
    async run({ config, flags, out, currency }) {
      const merchantId = required(flags, 'merchant');
      const cur = currency();
      const b = await withDatabase(config, async (d) => {
        const s = buildServices(config, d);
        await s.merchants.get(merchantId);
        return s.wallets.balance(merchantId, cur);
      });
      out(
        { currency: b.currency, available: toRupees(b.available), held: toRupees(b.held) },
        `${b.currency}  available ${formatAmount(b.available)}  held ${formatAmount(b.held)}`,
      );
      return 0;
    },
  },
  'ledger verify': {
    summary: 'check that every journal balances and every wallet equals its entries',
    options: {},
    async run({ config, out }) {
      const report = await withDatabase(config, (d) => buildServices(config, d).wallets.verify());
      out(
        { ...report },
        report.ok
          ? `ledger ok: ${report.journals} journals balance, ${report.wallets} wallets match their entries`
          : `ledger has ${report.problems.length} problem(s):\n${report.problems.join('\n')}`,
      );
      return report.ok ? 0 : 1;
    },
  },
};
