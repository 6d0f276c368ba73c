/**
 * Model of one LLM serving instance as vLLM V1 runs it: iteration-level scheduling with
 * chunked prefill, a block prefix cache with an LRU free queue, preemption by recompute
 * and an analytic step latency. Plain Java with time passed in by the caller, so the
 * emulator drives it in scaled real time and the simulator in virtual time.
 */
@NullMarked
package io.github.dualmap.engine;

import org.jspecify.annotations.NullMarked;
