package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import io.github.dualmap.prompt.OpenAiError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * Reading a request's head: a head the HTTP/1.1 codec cannot decode (headers or request
 * line too long, not valid HTTP) gets the status Reactor Netty would give it (431, 414,
 * 400) with the gateway's OpenAI error body rather than none, and its connection closed;
 * and, unless it is 0, a deadline ({@code dualmap.server.header-read-timeout}): from the
 * first byte of a request to the moment the HTTP/1.1 codec has decoded its request line
 * and headers (an {@link HttpRequest}). A head that takes longer (a slowloris client,
 * trickling a byte every few seconds to hold a connection for ever) is answered 408 with
 * the gateway's OpenAI error ({@code request_timeout}, as a body past
 * {@code dualmap.body-read-timeout} is) and {@code Connection: close}, and its connection
 * closed; what arrives after the deadline is dropped unread. Reactor Netty bounds a head
 * in size ({@code server.max-http-request-header-size}) and a connection's idle time
 * ({@code server.netty.idle-timeout}), but a client that sends a byte now and then is
 * never idle.
 * <p>
 * The deadline starts with the first bytes read while the connection waits for a new
 * request: its first bytes, or the first after the last part of the previous response was
 * written and the previous request's body was read to its end. It does not run between
 * requests (the idle timeout's part), while a response is owed (pipelined bytes wait for
 * it; bytes that came in the same read as the previous request are not counted, the next
 * ones are), nor after an interim (1xx) response: a 100 Continue leaves the body to
 * {@code body-read-timeout}, and a 101 hands the connection to another protocol
 * (WebSocket, h2c), which is never timed.
 * <p>
 * Two handlers sharing one state, around Reactor Netty's HTTP/1.1 codec
 * ({@link NettyPipeline#HttpCodec reactor.left.httpCodec}; with h2c on, the
 * {@link HttpServerCodec} Netty's upgrade handler adds under a name of its own). Before
 * the codec, {@link #BYTES_NAME} sees the bytes of a head, which the codec holds until
 * the head is whole (behind TLS when there is TLS: the handshake is not timed), and
 * starts the deadline. After it, {@link #NAME} sees the decoded head, which stops it, and
 * the responses as messages, which tell when one is complete; being right after the
 * codec, it is ahead of Reactor Netty's {@code HttpTrafficHandler}, which holds pipelined
 * requests back, and it writes the 408 straight into the codec, past the server's request
 * handling, which no request reached. A connection with no HTTP/1.1 codec when it is set
 * up (HTTP/2 negotiated by TLS) gets neither, nor do HTTP/2 streams.
 * <p>
 * One instance per connection; its state is only touched on the connection's event loop.
 */
public final class HeaderReadTimeout extends ChannelDuplexHandler {

	/** Its name in the channel pipeline, right after the HTTP codec. */
	public static final String NAME = "dualmap.headerReadTimeout";

	/**
	 * The name of the handler that sees the first bytes, right before the HTTP codec.
	 */
	public static final String BYTES_NAME = NAME + ".bytes";

	/** {@code dualmap.server.header-read-timeout}'s default. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

	private static final Log logger = LogFactory.getLog(HeaderReadTimeout.class);

	private final long timeoutNanos;

	/** Heads answered 408 on the server, counted for its meter. */
	private final Expirations expirations;

	/**
	 * The 408's body, shared by every connection of a server; none without a deadline.
	 */
	private final byte @Nullable [] answer;

	/**
	 * The HTTP/1.1 codec's place in the pipeline, removed once the connection upgrades.
	 */
	private final ChannelHandlerContext codec;

	private @Nullable ChannelHandlerContext ctx;

	/** Requests decoded whose final response has not been written in full. */
	private int owed;

	/** Between a decoded head and the end of its body. */
	private boolean inBody;

	/** Whether the response being written is an interim (1xx) one. */
	private boolean interim;

	private @Nullable ScheduledFuture<?> deadline;

	/** The deadline passed: the connection is answered 408 and closing. */
	private boolean expired;

	private HeaderReadTimeout(long timeoutNanos, Expirations expirations, byte @Nullable [] answer,
			ChannelHandlerContext codec) {
		this.timeoutNanos = timeoutNanos;
		this.expirations = expirations;
		this.answer = answer;
		this.codec = codec;
	}

	/**
	 * {@code server} with the deadline, and the answers to heads that cannot be decoded,
	 * on every HTTP/1.1 connection it accepts.
	 * @param timeout how long a head may take to arrive, >= 0; 0: no deadline (heads that
	 * cannot be decoded are still answered with the error body)
	 * @param expirations counts the heads answered 408
	 */
	public static HttpServer install(HttpServer server, Duration timeout, Expirations expirations) {
		byte[] answer = answer(timeout);
		long nanos = timeout.toNanos();
		return server
			.doOnChannelInit((observer, channel, remote) -> addTo(channel.pipeline(), nanos, expirations, answer));
	}

	static void addTo(ChannelPipeline pipeline, Duration timeout, Expirations expirations) {
		addTo(pipeline, timeout.toNanos(), expirations, answer(timeout));
	}

	private static void addTo(ChannelPipeline pipeline, long timeoutNanos, Expirations expirations,
			byte @Nullable [] answer) {
		if (pipeline.get(NAME) != null) {
			return;
		}
		ChannelHandlerContext codec = Http11Codec.in(pipeline);
		if (codec == null) {
			return;
		}
		HeaderReadTimeout handler = new HeaderReadTimeout(timeoutNanos, expirations, answer, codec);
		pipeline.addBefore(codec.name(), BYTES_NAME, handler.new FirstBytes());
		pipeline.addAfter(codec.name(), NAME, handler);
	}

	/** The OpenAI error a head too slow to arrive is answered with (408). */
	static OpenAiError error(Duration timeout) {
		return new OpenAiError(
				"request head not received within dualmap.server.header-read-timeout (" + timeout.toMillis() + " ms)",
				OpenAiError.INVALID_REQUEST, null, "request_timeout");
	}

	/** The 408's body; {@code null} for a timeout of 0, which never answers one. */
	private static byte @Nullable [] answer(Duration timeout) {
		if (timeout.isNegative()) {
			throw new IllegalArgumentException("timeout must be >= 0 but was " + timeout);
		}
		return timeout.isZero() ? null : error(timeout).toJson();
	}

	@Override
	public void handlerAdded(ChannelHandlerContext ctx) {
		this.ctx = ctx;
	}

	@Override
	public void handlerRemoved(ChannelHandlerContext ctx) {
		cancel();
	}

	@Override
	public void channelInactive(ChannelHandlerContext ctx) throws Exception {
		cancel();
		super.channelInactive(ctx);
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) {
		if (this.expired) {
			ReferenceCountUtil.release(msg);
			return;
		}
		if (msg instanceof HttpRequest request && request.decoderResult().isFailure() && this.owed == 0) {
			// A head the codec could not read: answered here, with the gateway's error
			// body, where Reactor Netty would answer the same status with none.
			cancel();
			ReferenceCountUtil.release(msg);
			refuse(ctx, request.decoderResult().cause());
			return;
		}
		if (msg instanceof HttpRequest) {
			// Its head is in: the deadline is met. Its body has a deadline of its own.
			cancel();
			this.owed++;
			this.inBody = true;
		}
		if (msg instanceof LastHttpContent) {
			this.inBody = false;
		}
		ctx.fireChannelRead(msg);
	}

	@Override
	public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
		if (msg instanceof HttpResponse response) {
			this.interim = response.status().codeClass() == HttpStatusClass.INFORMATIONAL;
		}
		if (msg instanceof LastHttpContent && !this.interim && this.owed > 0) {
			// A FullHttpResponse is a LastHttpContent too.
			this.owed--;
		}
		ctx.write(msg, promise);
	}

	/** Whether the connection waits for a new request's head. */
	private boolean awaitingHead() {
		// Without the codec, the connection was upgraded to another protocol.
		return !this.expired && this.owed == 0 && !this.inBody && !this.codec.isRemoved();
	}

	/** Bytes arrived: the first of a new head start the deadline, if there is one. */
	private void bytesRead() {
		ChannelHandlerContext context = this.ctx;
		if (this.answer != null && this.deadline == null && context != null && awaitingHead()) {
			this.deadline = context.executor().schedule(this::expire, this.timeoutNanos, TimeUnit.NANOSECONDS);
		}
	}

	private void cancel() {
		ScheduledFuture<?> pending = this.deadline;
		if (pending != null) {
			this.deadline = null;
			pending.cancel(false);
		}
	}

	private void expire() {
		this.deadline = null;
		ChannelHandlerContext context = this.ctx;
		if (context == null || !context.channel().isActive() || !awaitingHead()) {
			return;
		}
		this.expired = true;
		this.expirations.count.increment();
		if (logger.isDebugEnabled()) {
			logger.debug("Request head from " + context.channel().remoteAddress() + " not received within "
					+ Duration.ofNanos(this.timeoutNanos).toMillis() + " ms: answered 408, connection closed");
		}
		// Into the codec, which is between requests (no response is owed). A deadline is
		// only set with its answer.
		byte[] body = this.answer;
		if (body != null) {
			answerAndClose(context, HttpResponseStatus.REQUEST_TIMEOUT, body);
		}
	}

	/**
	 * Answers a head the codec could not decode as Reactor Netty would (431 for headers
	 * too large, 414 for a request line too long, 400 otherwise, and the connection
	 * closed), with the OpenAI error body the gateway's other refusals have.
	 */
	private static void refuse(ChannelHandlerContext ctx, @Nullable Throwable cause) {
		HttpResponseStatus status;
		OpenAiError error;
		if (cause instanceof TooLongHttpHeaderException) {
			status = HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE;
			error = new OpenAiError("request headers exceed server.max-http-request-header-size",
					OpenAiError.INVALID_REQUEST, null, "headers_too_large");
		}
		else if (cause instanceof TooLongHttpLineException) {
			status = HttpResponseStatus.REQUEST_URI_TOO_LONG;
			error = new OpenAiError("request line exceeds server.netty.max-initial-line-length",
					OpenAiError.INVALID_REQUEST, null, "request_line_too_long");
		}
		else {
			status = HttpResponseStatus.BAD_REQUEST;
			error = new OpenAiError(
					"request head is not valid HTTP/1.1"
							+ (cause != null && cause.getMessage() != null ? ": " + cause.getMessage() : ""),
					OpenAiError.INVALID_REQUEST, null, "invalid_http_request");
		}
		answerAndClose(ctx, status, error.toJson());
	}

	private static void answerAndClose(ChannelHandlerContext ctx, HttpResponseStatus status, byte[] body) {
		FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
				Unpooled.wrappedBuffer(body));
		response.headers()
			.set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
			.setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
			.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
		ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
	}

	/**
	 * How many request heads a server answered 408 because they took longer than the
	 * timeout: the meter {@code dualmap.server.header.read.timeouts} reads it, since the
	 * 408 is written past the server's request handling and never reaches
	 * {@code http.server.requests}. Thread-safe.
	 */
	public static final class Expirations {

		private final LongAdder count = new LongAdder();

		public long count() {
			return this.count.sum();
		}

	}

	/**
	 * Before the codec: sees the bytes of a head before they are a message, and drops
	 * what arrives once the deadline has passed.
	 */
	private final class FirstBytes extends ChannelInboundHandlerAdapter {

		@Override
		public void channelRead(ChannelHandlerContext ctx, Object msg) {
			if (HeaderReadTimeout.this.expired) {
				ReferenceCountUtil.release(msg);
				return;
			}
			if (msg instanceof ByteBuf bytes && bytes.isReadable()) {
				bytesRead();
			}
			ctx.fireChannelRead(msg);
		}

	}

}
