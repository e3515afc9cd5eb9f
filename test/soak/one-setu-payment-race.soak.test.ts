/**
 * The race of `test/live/one-setu-payment-by-poll-and-notification.test.ts` at length: 200 pairs of
 * a poll and a notification for the same Setu payment per database (RACE_PAIRS to change it).
 */
process.env.RACE_PAIRS ??= '200';
await import('../live/one-setu-payment-by-poll-and-notification.test.ts');
