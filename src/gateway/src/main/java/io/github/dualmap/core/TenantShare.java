package io.github.dualmap.core;

/**
 * One tenant's part of a pool's recent service ({@link DispatchQueues#tenantShares()}).
 *
 * @param tenant the tenant's name
 * @param weight its weight
 * @param priority its priority band (the highest it was served or waits in, when its
 * requests come in several: their counts and served tokens are summed over its bands)
 * @param queued its requests waiting in the pool's queues now
 * @param servedTokens the service released for it over the window (with the service other
 * replicas released, once credited by {@link DispatchQueues#creditRemoteService}), in
 * weighted tokens (uncached prompt 1, cached prompt and output at their weights; output
 * corrected to the actual count as requests finish)
 * @param share its served tokens over the pool's in the window, in [0, 1]
 * @param fairShare its weight over the summed weights of the tenants served or waiting in
 * the window (its weighted fair share while they all want more than that)
 * @param counter its virtual token counter in that band (service over weight; comparable
 * between tenants of one pool and band only)
 */
public record TenantShare(String tenant, double weight, int priority, int queued, double servedTokens, double share,
		double fairShare, double counter) {

}
