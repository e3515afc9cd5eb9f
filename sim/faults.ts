/**
 * The faults a simulated provider injects into calls: each call draws from the running command's
 * own generator, so a command list replays the same faults whatever commands were shrunk away.
 */
import { ChannelFailure } from '../src/channels/channel.ts';
import { Rng } from './rng.ts';

/** What happens to a call that changes something at the provider. */
export type SendFault = 'ok' | 'unavailable' | 'throttled' | 'lost' | 'acted';
/** What happens to a read. */
export type ReadFault = 'ok' | 'unavailable' | 'unknown' | 'lag' | 'notfound';

export class Faults {
  private rng = new Rng(1);

  /** `rate`: the share of calls that meet a fault, fixed per history. */
  constructor(public rate: number) {}

  /** Each command runs with a generator of its own (its `f`). */
  use(seed: number): void {
    this.rng = new Rng(seed);
  }

  send(): SendFault {
    if (!this.rng.chance(this.rate)) return 'ok';
    return this.rng.pick(['unavailable', 'throttled', 'lost', 'acted'] as const);
  }

  read(): ReadFault {
    if (!this.rng.chance(this.rate)) return 'ok';
    return this.rng.pick(['unavailable', 'unknown', 'lag', 'notfound'] as const);
  }

  /** A chance drawn from the command's generator (a customer's or a bank's choice). */
  chance(p: number): boolean {
    return this.rng.chance(p);
  }
}

/** The failure a send fault throws (none for `ok`; `acted` throws only after acting). */
export function sendFailure(channel: string, op: string, fault: SendFault): ChannelFailure | null {
  switch (fault) {
    case 'ok':
      return null;
    case 'unavailable':
      return new ChannelFailure('unavailable', channel, 'unavailable', `${channel} ${op}: 503 before acting`);
    case 'throttled':
      return new ChannelFailure('unavailable', channel, 'rate_limited', `${channel} ${op}: 429`);
    case 'lost':
      return new ChannelFailure('unknown', channel, 'timeout', `${channel} ${op}: no answer`, true);
    case 'acted':
      return new ChannelFailure('unknown', channel, 'server_error', `${channel} ${op}: 500 after acting`);
  }
}

/** The failure a read fault throws, for the faults that throw. */
export function readFailure(channel: string, op: string, fault: ReadFault): ChannelFailure | null {
  if (fault === 'unavailable')
    return new ChannelFailure('unavailable', channel, 'rate_limited', `${channel} ${op}: 429`);
  if (fault === 'unknown')
    return new ChannelFailure('unknown', channel, 'timeout', `${channel} ${op}: no answer`, true);
  return null;
}
