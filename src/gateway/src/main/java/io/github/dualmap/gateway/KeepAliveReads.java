package io.github.dualmap.gateway;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.LastHttpContent;
import reactor.netty.http.server.HttpServer;

/**
 * Asks for the next read of an HTTP/1.1 connection once a response has been written in
 * full. Reactor Netty reads a server connection on demand, and up to at least 1.3.7 it
 * forgets to ask again when a request it held behind an unfinished response (sent early
 * on a keep-alive connection, or pipelined) is answered within the turn that lets it
 * through, as a 404 or an actuator read is (reactor/reactor-netty#4361): the client's
 * next request on that connection is never read and hangs until the client gives up. A
 * read asked for once more is harmless: data already buffered is handed on as usual, and
 * the codec holds requests that arrive early. The read is asked for on the event loop
 * after the current task, so after the codec has drained what it held.
 * <p>
 * Stateless; one instance serves every connection.
 */
@ChannelHandler.Sharable
public final class KeepAliveReads extends ChannelOutboundHandlerAdapter {

	/** Its name in the channel pipeline. */
	public static final String NAME = "dualmap.keepAliveReads";

	private static final KeepAliveReads INSTANCE = new KeepAliveReads();

	private KeepAliveReads() {
	}

	/** {@code server} with the handler on every connection it accepts. */
	public static HttpServer install(HttpServer server) {
		return server.doOnChannelInit((observer, channel, remote) -> addTo(channel.pipeline()));
	}

	static void addTo(ChannelPipeline pipeline) {
		if (pipeline.get(NAME) == null) {
			pipeline.addLast(NAME, INSTANCE);
		}
	}

	@Override
	public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
		if (msg instanceof LastHttpContent) {
			// A FullHttpResponse is a LastHttpContent too.
			ChannelPromise written = promise.unvoid();
			written.addListener(f -> {
				if (f.isSuccess() && ctx.channel().isActive()) {
					ctx.channel().eventLoop().execute(() -> ctx.channel().read());
				}
			});
			ctx.write(msg, written);
			return;
		}
		ctx.write(msg, promise);
	}

}
