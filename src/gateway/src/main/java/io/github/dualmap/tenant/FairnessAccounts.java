package io.github.dualmap.tenant;

import org.jspecify.annotations.Nullable;

/** Whether each pool's fairness account is shared with the other gateway replicas. */
public interface FairnessAccounts {

	/** {@code service}'s account, or {@code null} when it is not shared. */
	@Nullable Status status(String service);

	/**
	 * A pool's fairness account as {@code /actuator/dualmap} shows it.
	 *
	 * @param shared whether the account is shared with the other replicas through Redis
	 * ({@code dualmap.tenants.store=redis} with fairness on)
	 * @param inSync whether its last sync succeeded; {@code false} before the first and
	 * while Redis fails, when releases follow this replica's own account
	 * @param lastSyncAgeMs time since its last successful sync, {@code null} before any
	 * @param syncs successful syncs since this replica started
	 * @param syncFailures syncs that failed or timed out since this replica started
	 */
	record Status(boolean shared, boolean inSync, @Nullable Long lastSyncAgeMs, long syncs, long syncFailures) {

		/** A pool whose account is this replica's own. */
		public static final Status LOCAL = new Status(false, false, null, 0, 0);

	}

}
