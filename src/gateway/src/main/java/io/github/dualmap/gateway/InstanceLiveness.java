package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.InstancePool;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * What one service's instances say by answering or keeping silent: when each last
 * answered, its scrape failures, and the tries sent to it that wait on its answer. An
 * instance silent for too long is taken out as unresponsive through its
 * {@link InstanceBreakers} and the tries waiting on it are abandoned; its first answer
 * puts it back. Apart from {@link ServicePool} so the rule reads in one place.
 *
 * <p>
 * Its per-instance state follows the membership under the membership lock (shared with
 * {@link InstanceMembership}): an instance that is leaving must not keep a count or a
 * flag it got while it was leaving.
 */
final class InstanceLiveness {

	// The category operators know these lines under.
	private static final Log logger = LogFactory.getLog(ServicePool.class);

	private final String serviceId;

	private final InstancePool pool;

	private final InstanceBreakers breakers;

	private final Object membershipLock;

	private final Map<String, AtomicLong> scrapeFailures = new ConcurrentHashMap<>();

	/**
	 * Pool clock reading of the last answer from each member (or its joining): its keys
	 * are the members.
	 */
	private final Map<String, Long> lastHeard = new ConcurrentHashMap<>();

	/**
	 * Tries sent to an instance that have not ended: those waiting on an instance taken
	 * out as unresponsive are abandoned ({@link RoutedAttempt#abandon}).
	 */
	private final Set<RoutedAttempt> sent = ConcurrentHashMap.newKeySet();

	InstanceLiveness(String serviceId, InstancePool pool, InstanceBreakers breakers, Object membershipLock) {
		this.serviceId = serviceId;
		this.pool = pool;
		this.breakers = breakers;
		this.membershipLock = membershipLock;
	}

	/**
	 * The members are {@code instanceIds} now: a departed instance's count would
	 * otherwise stay forever, one that comes back starts from zero (like its meters), and
	 * a joining one counts as heard now. Called under the membership lock.
	 */
	void retain(Collection<String> instanceIds) {
		this.scrapeFailures.keySet().retainAll(instanceIds);
		this.lastHeard.keySet().retainAll(instanceIds);
		long now = this.pool.now();
		for (String id : instanceIds) {
			this.lastHeard.putIfAbsent(id, now);
		}
	}

	/**
	 * {@code instanceId} answered (a scrape, even a failed one, or a response's first
	 * byte): it is responsive again if it was taken out as unresponsive.
	 */
	void heard(String instanceId) {
		if (this.lastHeard.replace(instanceId, this.pool.now()) != null && this.breakers.markResponsive(instanceId)) {
			logger.info("Instance " + instanceId + " of " + this.serviceId + " answers again: it gets new requests");
		}
	}

	/**
	 * A scrape of {@code instanceId} got no answer: when nothing has come from it for
	 * {@code silenceNanos} (since it joined, if it never answered), it is taken out as
	 * unresponsive until it answers.
	 * @param why the scrape's failure, for the log
	 */
	void unanswered(String instanceId, long silenceNanos, Throwable why) {
		long silent;
		// Under the membership lock, as countScrapeFailure: an instance that left (and
		// may come back as a new member) must not keep a flag set while it was leaving.
		synchronized (this.membershipLock) {
			Long last = this.lastHeard.get(instanceId);
			silent = last == null ? -1 : this.pool.now() - last;
			if (last == null || silent < silenceNanos || !this.breakers.markUnresponsive(instanceId)) {
				return;
			}
			// An answer that came while this looked (heard() is not under this lock) must
			// not be lost: it moved lastHeard before clearing a flag not set yet.
			if (!last.equals(this.lastHeard.get(instanceId))) {
				this.breakers.markResponsive(instanceId);
				return;
			}
		}
		int abandoned = 0;
		for (RoutedAttempt attempt : this.sent) {
			if (attempt.instanceId().equals(instanceId) && attempt.abandon()) {
				abandoned++;
			}
		}
		logger.warn("Instance " + instanceId + " of " + this.serviceId + " has not answered for "
				+ Duration.ofNanos(silent).toMillis() + " ms (no scrape answered, no response byte; last: " + why
				+ "): no new requests go to it, and its queued ones move, until it answers"
				+ " (dualmap.scrape.unresponsive-after)" + (abandoned == 0 ? ""
						: "; " + abandoned + " sent to it and waiting for its answer are sent to another instance"));
	}

	/** A try was sent to its instance: it waits on that instance's answer. */
	void sent(RoutedAttempt attempt) {
		this.sent.add(attempt);
	}

	/** A try ended: it no longer waits on its instance. */
	void ended(RoutedAttempt attempt) {
		this.sent.remove(attempt);
	}

	/** Tries sent to an instance that have not ended. */
	int triesInFlight() {
		return this.sent.size();
	}

	void countScrapeFailure(String instanceId) {
		// Under the membership lock: a scrape that fails while its instance is being
		// removed must not re-create the count the membership update just dropped.
		synchronized (this.membershipLock) {
			if (this.lastHeard.containsKey(instanceId)) {
				this.scrapeFailures.computeIfAbsent(instanceId, id -> new AtomicLong()).incrementAndGet();
			}
		}
	}

	/**
	 * Scrape failures of {@code instanceId} since it last joined; 0 for a non-member.
	 */
	long scrapeFailures(String instanceId) {
		AtomicLong n = this.scrapeFailures.get(instanceId);
		return n == null ? 0 : n.get();
	}

	/** Scrape failures per instance id. */
	Map<String, Long> scrapeFailures() {
		Map<String, Long> out = new LinkedHashMap<>();
		this.scrapeFailures.forEach((id, n) -> out.put(id, n.get()));
		return out;
	}

}
