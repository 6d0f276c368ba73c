package com.example.llmgateway;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;

import reactor.netty.http.Http11SslContextSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Replica sync reaches a peer at an {@code https://} address whose self-signed
 * certificate (made here with keytool) the SSL bundle named by
 * {@code dualmap.replicas.ssl-bundle} trusts, with its bearer token; without that bundle
 * the handshake fails and the peer receives nothing. A plain {@code http://} peer beside
 * it stays plain.
 */
class ReplicaHttpsPeerTests {

	private static final String PASSWORD = "changeit";

	@TempDir
	Path dir;

	private DisposableServer tls;

	private DisposableServer plain;

	private final Queue<String> tlsRequests = new ConcurrentLinkedQueue<>();

	private final Queue<String> plainRequests = new ConcurrentLinkedQueue<>();

	private Path certificate;

	@BeforeEach
	void peers() throws Exception {
		Path keyStore = this.dir.resolve("peer.p12");
		keytool("-genkeypair", "-alias", "peer", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
				"-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-keystore", keyStore.toString(),
				"-storetype", "PKCS12", "-storepass", PASSWORD);
		this.certificate = this.dir.resolve("peer.crt");
		keytool("-exportcert", "-rfc", "-alias", "peer", "-keystore", keyStore.toString(), "-storetype", "PKCS12",
				"-storepass", PASSWORD, "-file", this.certificate.toString());
		KeyStore store = KeyStore.getInstance("PKCS12");
		try (InputStream in = Files.newInputStream(keyStore)) {
			store.load(in, PASSWORD.toCharArray());
		}
		KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
		keys.init(store, PASSWORD.toCharArray());
		this.tls = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.secure(spec -> spec.sslContext(Http11SslContextSpec.forServer(keys)))
			.handle((req, res) -> {
				this.tlsRequests.add(req.method() + " " + req.uri() + " " + req.requestHeaders().get("authorization"));
				return res.status(404).send();
			})
			.bindNow();
		this.plain = HttpServer.create().host("127.0.0.1").port(0).handle((req, res) -> {
			this.plainRequests.add(req.method() + " " + req.uri() + " " + req.requestHeaders().get("authorization"));
			return res.status(404).send();
		}).bindNow();
	}

	@AfterEach
	void stopPeers() {
		this.tls.disposeNow();
		this.plain.disposeNow();
	}

	private static void keytool(String... args) throws IOException, InterruptedException {
		Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
		List<String> command = new java.util.ArrayList<>(List.of(keytool.toString()));
		command.addAll(List.of(args));
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes());
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).as(output).isZero();
	}

	private ConfigurableApplicationContext gateway(String... more) {
		List<String> properties = new java.util.ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
				"dualmap.services=llm", "dualmap.scrape.enabled=false", "dualmap.replicas.enabled=true",
				// The start-up snapshot is asked for once the pools' members are known.
				"spring.cloud.discovery.client.simple.instances.llm[0].uri=http://127.0.0.1:9",
				"dualmap.replicas.token=peer-secret-0123456789", "dualmap.replicas.peers=https://127.0.0.1:"
						+ this.tls.port() + ",http://127.0.0.1:" + this.plain.port()));
		properties.addAll(List.of(more));
		return new SpringApplicationBuilder(ExampleGatewayApplication.class).web(WebApplicationType.REACTIVE)
			.properties(properties.toArray(String[]::new))
			.run();
	}

	@Test
	void anHttpsPeerWhoseCertificateTheBundleTrustsGetsTheToken() {
		try (ConfigurableApplicationContext context = gateway("dualmap.replicas.ssl-bundle=peers",
				"spring.ssl.bundle.pem.peers.truststore.certificate=file:" + this.certificate)) {
			// The start-up snapshot is asked of each peer in turn (both answer 404).
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
				assertThat(this.tlsRequests)
					.containsExactly("GET /dualmap/replicas/releases Bearer peer-secret-0123456789");
				assertThat(this.plainRequests)
					.containsExactly("GET /dualmap/replicas/releases Bearer peer-secret-0123456789");
			});
		}
	}

	@Test
	void withoutTheBundleTheSelfSignedPeerIsNotTrusted() {
		try (ConfigurableApplicationContext context = gateway()) {
			// The plain peer is asked after the https one failed its handshake.
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(this.plainRequests).hasSize(1));
			assertThat(this.tlsRequests).isEmpty();
		}
	}

}
