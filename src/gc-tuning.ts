/**
 * How the serving process sets up V8's garbage collector.
 *
 * V8 watches each allocation site (an object or array literal in a function) and, when most of the
 * objects it made were still alive at a garbage collection, allocates all its later objects
 * straight in the old generation ("pretenuring"); it did not take that back in our traces, even
 * when later only 17-28 % of them survived. A server that receives load the moment it starts runs
 * its request path cold, slowly, with every connection's request in flight at each collection, so
 * some per-request sites can look long-lived and be pretenured for the life of the process. Each
 * process that then fell into the slow state below had 3-8 more sites pretenured, at its first full
 * collection under load, than the 10 that every process pretenures while loading its modules; no
 * other process had. In that state every request was promoted: each scavenge kept about a third of
 * what the requests allocated, the old generation filled at about 100 MB/s and a full collection
 * ran every 0.8-0.9 s. (Which sites, and which pointers carry the requests into the old
 * generation, was not traced further.)
 *
 * Measured on payin_status (SQLite, 50 connections, load from the first second): 11 of 103
 * gateway processes fell into that state, with scavenges of 8-12 ms instead of about 1 ms and
 * status queries costing 39-72 µs of CPU against medians of 31-37 µs for the other processes of
 * the same runs; with pretenuring off, 0 of 77, and the same cost per query otherwise
 * (docs/performance.md).
 *
 * Set at start-up, before the web stack is loaded. The flag only changes a heuristic that V8
 * consults at each collection.
 */
import v8 from 'node:v8';

export function keepRequestObjectsYoung(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
