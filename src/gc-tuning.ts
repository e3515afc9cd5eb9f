/**
 * How the serving process sets up V8's garbage collector.
 *
 * V8 watches each allocation site (an object or array literal in a function) and, when most of the
 * objects it made were still alive at a garbage collection, allocates all its later objects
 * straight in the old generation ("pretenuring"). The decision is never taken back. A server that
 * receives load the moment it starts runs its request path cold, slowly, with every connection's
 * request in flight at each collection; some per-request sites then look long-lived and are
 * pretenured for the life of the process. From then on every request leaves old-generation garbage
 * that points at its young objects, so each scavenge keeps and promotes the whole request, the old
 * generation fills at ~100 MB/s and full collections run about once a second.
 *
 * Measured on payin_status (SQLite, 50 connections): in about 1 process in 10 (2 in 10, 1 in 20,
 * and 2 of 7 benchmark sets after the creation scenarios), a scavenge took 8-12 ms instead of
 * 0.9 ms and a status query cost 43-67 µs of CPU instead of 30-37. With pretenuring off: no such
 * process in 90, and the same cost per query otherwise (docs/performance.md).
 *
 * Set at start-up, before the web stack is loaded. The flag only changes a heuristic that V8
 * consults at each collection.
 */
import v8 from 'node:v8';

export function keepRequestObjectsYoung(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
