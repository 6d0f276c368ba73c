package io.github.dualmap.gateway;

import java.util.concurrent.atomic.AtomicInteger;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class KeepAliveReadsTests {

	/** Counts the reads asked of the channel, below the handler under test. */
	private final AtomicInteger reads = new AtomicInteger();

	private EmbeddedChannel channel() {
		EmbeddedChannel channel = new EmbeddedChannel();
		channel.config().setAutoRead(false);
		channel.pipeline().addLast(new ChannelOutboundHandlerAdapter() {
			@Override
			public void read(ChannelHandlerContext ctx) {
				KeepAliveReadsTests.this.reads.incrementAndGet();
				ctx.read();
			}
		});
		KeepAliveReads.addTo(channel.pipeline());
		return channel;
	}

	@Test
	void asksForAReadOnceTheLastPartOfAResponseIsWritten() {
		EmbeddedChannel channel = channel();
		channel.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
		channel.writeOutbound(new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[] { 1 })));
		channel.runPendingTasks();
		assertThat(this.reads).hasValue(0);
		channel.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
		channel.runPendingTasks();
		assertThat(this.reads).hasValue(1);
		channel.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_FOUND));
		channel.runPendingTasks();
		assertThat(this.reads).hasValue(2);
		assertThat(channel.outboundMessages()).hasSize(4);
		channel.finishAndReleaseAll();
	}

	@Test
	void asksNothingOfAConnectionThatClosedOrAWriteThatFailed() {
		EmbeddedChannel channel = channel();
		channel.pipeline().addFirst(new ChannelOutboundHandlerAdapter() {
			@Override
			public void write(ChannelHandlerContext ctx, Object msg, io.netty.channel.ChannelPromise promise) {
				promise.setFailure(new IllegalStateException("reset"));
			}
		});
		channel.writeOneOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
		channel.flushOutbound();
		channel.runPendingTasks();
		assertThat(this.reads).hasValue(0);
		channel.close();
		channel.runPendingTasks();
		assertThat(this.reads).hasValue(0);
	}

	@Test
	void isAddedOncePerPipeline() {
		EmbeddedChannel channel = channel();
		KeepAliveReads.addTo(channel.pipeline());
		assertThat(channel.pipeline().names().stream().filter(KeepAliveReads.NAME::equals)).hasSize(1);
		channel.finishAndReleaseAll();
	}

}
