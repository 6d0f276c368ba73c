package io.github.dualmap.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A listener that records every outcome, in order, for assertions. */
final class Outcomes implements DispatchListener {

	final List<RequestTicket> released = new ArrayList<>();

	final Map<RequestTicket, Rejection> rejected = new LinkedHashMap<>();

	final Map<RequestTicket, Integer> calls = new LinkedHashMap<>();

	@Override
	public synchronized void released(RequestTicket request, Decision decision, InstancePool.InFlight dispatch) {
		released.add(request);
		calls.merge(request, 1, Integer::sum);
	}

	@Override
	public synchronized void rejected(RequestTicket request, Rejection rejection) {
		rejected.put(request, rejection);
		calls.merge(request, 1, Integer::sum);
	}

	synchronized List<String> releasedIds() {
		return released.stream().map(q -> q.request().id()).toList();
	}

}
