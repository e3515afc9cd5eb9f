/** Channel choice: which channel a merchant's payments go through, the same for both kinds. */
import type { Channel } from '../channels/channel.ts';
import { AppError } from '../errors.ts';
import type { Principal } from '../merchants/merchants.service.ts';

/** Resolves the channel for a merchant's mode, or throws 403 when none is configured. */
export type ChannelFor = (principal: Principal) => Channel;

/**
 * The choice while the sandbox is the only channel: test merchants get it, live merchants a 403
 * (there is no live channel to send their money through).
 */
export function sandboxOnly(sandbox: Channel): ChannelFor {
  return (p) => {
    if (p.mode === 'test') return sandbox;
    throw new AppError(
      'LIVE_CHANNEL_NOT_CONFIGURED',
      'No live payment channel is configured for this gateway',
    );
  };
}
