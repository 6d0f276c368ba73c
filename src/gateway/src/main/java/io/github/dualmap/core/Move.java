package io.github.dualmap.core;

/**
 * A queued request's best move found by the rebalancer or the idle pull: where it goes
 * and its TTFT estimate there, which becomes its decision's estimate.
 */
record Move(RequestTicket request, InstanceState target, long estimateThereNanos) {
}
