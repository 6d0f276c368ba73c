package io.github.dualmap.gateway;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.github.dualmap.prompt.OpenAiError;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * The bound on request bodies the gateway holds in memory at once
 * ({@code dualmap.max-buffered-size}). DualMap reads a body whole before routing and
 * keeps it until its exchange ends: to route it, to hold it in the dispatch queues, to
 * send it again on a retry. {@code max-body-size} bounds one body; this bounds all of
 * them, so a burst of large uploads or a long queue of them gets 503s instead of
 * exhausting the heap. Bytes are reserved as they arrive and given back, all at once,
 * when the exchange ends (answered, failed or cancelled) by the {@link #webFilter() web
 * filter}.
 */
public final class RequestBuffers {

	/** What one exchange holds ({@link Held}). */
	static final String HELD_ATTR = RequestBuffers.class.getName() + ".held";

	/** {@code Retry-After} of the 503 for a full budget: bodies come and go quickly. */
	public static final long RETRY_AFTER_SECONDS = 1;

	private final long limit;

	private final AtomicLong used = new AtomicLong();

	private final LongAdder rejections = new LongAdder();

	private final LongAdder unparsed = new LongAdder();

	public RequestBuffers(long limitBytes) {
		if (limitBytes <= 0) {
			throw new IllegalArgumentException("limitBytes must be > 0 but was " + limitBytes);
		}
		this.limit = limitBytes;
	}

	/**
	 * Reserves {@code bytes} more for {@code exchange}'s body, or refuses (and counts a
	 * rejection) when the budget cannot hold them or the exchange has ended.
	 */
	boolean reserve(ServerWebExchange exchange, long bytes) {
		Held held = held(exchange);
		synchronized (held) {
			if (held.ended) {
				return false;
			}
			if (take(bytes)) {
				held.bytes += bytes;
				return true;
			}
		}
		this.rejections.increment();
		return false;
	}

	/**
	 * The most {@code exchange} could take beyond what it holds, were the budget empty of
	 * every other exchange.
	 */
	long headroom(ServerWebExchange exchange) {
		Held held = held(exchange);
		synchronized (held) {
			return this.limit - held.bytes;
		}
	}

	/**
	 * Takes {@code bytes} for a moment (the working memory of parsing a body), or refuses
	 * (and counts a rejection); {@link #giveBack} returns them.
	 */
	boolean takeTransient(long bytes) {
		if (take(bytes)) {
			return true;
		}
		this.rejections.increment();
		return false;
	}

	void giveBack(long bytes) {
		this.used.addAndGet(-bytes);
	}

	private boolean take(long bytes) {
		long now;
		do {
			now = this.used.get();
			if (now + bytes > this.limit) {
				return false;
			}
		}
		while (!this.used.compareAndSet(now, now + bytes));
		return true;
	}

	/** Gives back everything {@code exchange} holds; it reserves nothing afterwards. */
	void release(ServerWebExchange exchange) {
		Held held = held(exchange);
		synchronized (held) {
			held.ended = true;
			this.used.addAndGet(-held.bytes);
			held.bytes = 0;
		}
	}

	/** What {@code exchange} holds, created on first use (a release marks it ended). */
	private static Held held(ServerWebExchange exchange) {
		return (Held) exchange.getAttributes().computeIfAbsent(HELD_ATTR, k -> new Held());
	}

	/** Bytes held now. */
	public long used() {
		return this.used.get();
	}

	/** The budget in bytes. */
	public long limit() {
		return this.limit;
	}

	/**
	 * Bodies routed by load without their prompt because parsing them could never fit in
	 * the budget ({@link BodyLimits#whileParsing}), since startup.
	 */
	public long unparsed() {
		return this.unparsed.sum();
	}

	void countUnparsed() {
		this.unparsed.increment();
	}

	/** Bodies refused because the budget was full, since startup. */
	public long rejections() {
		return this.rejections.sum();
	}

	/**
	 * The web filter that gives each exchange's bytes back when it ends; first of all
	 * filters, so it sees every end.
	 */
	public WebFilter webFilter() {
		return new ReleasingFilter();
	}

	/** Thrown by a read the budget cannot hold. */
	public static final class FullException extends ResponseStatusException {

		FullException(long limit) {
			super(HttpStatus.SERVICE_UNAVAILABLE,
					"the gateway holds its limit of request bodies in memory (dualmap.max-buffered-size, " + limit
							+ " bytes); retry shortly");
		}

		/**
		 * The OpenAI error it is answered with (503, with {@link #RETRY_AFTER_SECONDS}).
		 */
		public OpenAiError toOpenAiError() {
			return new OpenAiError(getReason(), "service_unavailable", null, "gateway_buffers_full");
		}

	}

	private static final class Held {

		private long bytes;

		private boolean ended;

	}

	private final class ReleasingFilter implements WebFilter, Ordered {

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
			return chain.filter(exchange).doFinally(signal -> release(exchange));
		}

	}

}
