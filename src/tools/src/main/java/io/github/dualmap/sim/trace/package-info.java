/**
 * Workloads for the simulator: readers of Mooncake JSONL and Azure-style CSV traces, and
 * seeded synthetic generators of shared-prefix traffic.
 */
@NullMarked
package io.github.dualmap.sim.trace;

import org.jspecify.annotations.NullMarked;
