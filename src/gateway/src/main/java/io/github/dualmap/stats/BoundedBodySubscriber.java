package io.github.dualmap.stats;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

import org.jspecify.annotations.Nullable;

/**
 * Collects a response body up to a byte limit and cancels the exchange beyond it, so a
 * misbehaving endpoint cannot fill the gateway's memory.
 */
final class BoundedBodySubscriber implements HttpResponse.BodySubscriber<byte[]> {

	private final int maxBytes;

	private final ByteArrayOutputStream body = new ByteArrayOutputStream();

	private final CompletableFuture<byte[]> result = new CompletableFuture<>();

	private Flow.@Nullable Subscription subscription;

	BoundedBodySubscriber(int maxBytes) {
		this.maxBytes = maxBytes;
	}

	@Override
	public CompletionStage<byte[]> getBody() {
		return result;
	}

	@Override
	public void onSubscribe(Flow.Subscription subscription) {
		this.subscription = subscription;
		subscription.request(Long.MAX_VALUE);
	}

	@Override
	public void onNext(List<ByteBuffer> buffers) {
		if (result.isDone()) {
			return;
		}
		for (ByteBuffer buffer : buffers) {
			if (body.size() + buffer.remaining() > maxBytes) {
				Flow.Subscription s = subscription;
				if (s != null) {
					s.cancel();
				}
				result
					.completeExceptionally(new ScrapeAnsweredException("metrics body exceeds " + maxBytes + " bytes"));
				return;
			}
			byte[] chunk = new byte[buffer.remaining()];
			buffer.get(chunk);
			body.write(chunk, 0, chunk.length);
		}
	}

	@Override
	public void onError(Throwable failure) {
		result.completeExceptionally(failure);
	}

	@Override
	public void onComplete() {
		result.complete(body.toByteArray());
	}

}
