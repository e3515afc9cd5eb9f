/**
 * How the serving process sets up V8's garbage collector.
 *
 * V8 watches each allocation site (an object or array literal in a function) and, when most of the
 * objects it made were still alive at a garbage collection, allocates all its later objects
 * straight in the old generation ("pretenuring"). A request path that takes heavy load while its
 * code is still cold (a fresh process, or a route first hit under load) has every connection's
 * request in flight at each collection, so some of its per-request sites can look long-lived and be
 * pretenured. In the processes where that happened, every request was then promoted to the old
 * generation for as long as the process lived: scavenges grew many times longer, full collections
 * ran constantly, and a status query cost far more CPU than usual. With pretenuring off, no process
 * falls into that state, and the usual cost per request is the same.
 * How it was traced, and the figures: docs/performance.md ("What was changed").
 */
import v8 from 'node:v8';

/**
 * Turns pretenuring off for the rest of the process. Called as `paygate serve` starts, before the
 * web stack is loaded: a decision V8 has already taken stays in force.
 */
export function disableAllocationSitePretenuring(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
