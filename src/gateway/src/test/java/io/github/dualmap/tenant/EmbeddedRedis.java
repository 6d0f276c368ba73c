package io.github.dualmap.tenant;

import java.io.IOException;

import redis.embedded.RedisServer;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * A real Redis server on loopback (the binary embedded-redis ships), without persistence,
 * and a reactive template connected to it: for the tests of the Redis scripts, one per
 * test class.
 */
final class EmbeddedRedis implements AutoCloseable {

	final int port;

	final ReactiveStringRedisTemplate template;

	private final RedisServer server;

	private final LettuceConnectionFactory connections;

	private EmbeddedRedis(int port, RedisServer server, LettuceConnectionFactory connections) {
		this.port = port;
		this.server = server;
		this.connections = connections;
		this.template = new ReactiveStringRedisTemplate(connections);
	}

	static EmbeddedRedis start() throws IOException {
		int port = TenantGateways.freePort();
		RedisServer server = server(port);
		server.start();
		LettuceConnectionFactory connections = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port));
		connections.afterPropertiesSet();
		connections.start();
		return new EmbeddedRedis(port, server, connections);
	}

	/**
	 * A Redis server on loopback at {@code port}, not started, that keeps nothing on
	 * disk: for tests that stop and start it themselves.
	 */
	static RedisServer server(int port) throws IOException {
		return RedisServer.newRedisServer()
			.bind("127.0.0.1")
			.port(port)
			.setting("save \"\"")
			.setting("appendonly no")
			.build();
	}

	@Override
	public void close() throws IOException {
		this.connections.destroy();
		if (this.server.isActive()) {
			this.server.stop();
		}
	}

}
