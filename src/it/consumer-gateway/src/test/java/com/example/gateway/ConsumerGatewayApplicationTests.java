package com.example.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.emulator.EmulatorServer;
import io.github.dualmap.emulator.EmulatorSettings;
import io.github.dualmap.engine.EngineProfile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application as its user runs it, in front of two emulated vLLM instances (found
 * through Spring Cloud's simple discovery): a chat completion on {@code lb://llm} is
 * answered by one of them, and the same prompt again by the same one, from its cache;
 * DualMap's decision headers stay off, as by default (they name backends to clients).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "server.address=127.0.0.1")
class ConsumerGatewayApplicationTests {

	static final List<EmulatorServer> ENGINES = List.of(start(), start());

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	int port;

	static EmulatorServer start() {
		return EmulatorServer.start(EmulatorSettings.of(EngineProfile.h100_8b()).withTimeScale(20), 0);
	}

	@DynamicPropertySource
	static void engines(DynamicPropertyRegistry properties) {
		for (int i = 0; i < ENGINES.size(); i++) {
			properties.add("spring.cloud.discovery.client.simple.instances.llm[" + i + "].uri",
					ENGINES.get(i)::baseUrl);
		}
	}

	@AfterAll
	static void stop() {
		ENGINES.forEach(EmulatorServer::close);
	}

	@Test
	void aChatCompletionIsRoutedByDualMapToAnEmulatedInstance() throws Exception {
		String body = """
				{"model":"%s","max_tokens":4,"messages":[
				{"role":"system","content":"%s"},{"role":"user","content":"What is a prefix cache?"}]}"""
			.formatted(EmulatorSettings.DEFAULT_MODEL, "You are the assistant of a routing test. ".repeat(30));
		HttpResponse<String> first = chat(body);
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(first.body()).contains("\"chat.completion\"");
		assertThat(first.headers().firstValue("x-dualmap-instance")).isEmpty();
		assertThat(first.headers().firstValue("x-dualmap-reason")).isEmpty();
		// Exactly one engine saw the prompt.
		List<Long> queried = new ArrayList<>();
		ENGINES.forEach(engine -> queried.add(engine.stats().prefixQueryTokens()));
		assertThat(queried).filteredOn(tokens -> tokens > 0).hasSize(1);
		int instance = queried.get(0) > 0 ? 0 : 1;
		// The same prompt again: the same instance, whose cache holds it.
		HttpResponse<String> second = chat(body);
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(ENGINES.get(1 - instance).stats().prefixQueryTokens()).isZero();
		assertThat(ENGINES.get(instance).stats().prefixHitTokens()).isPositive();
	}

	private HttpResponse<String> chat(String body) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/v1/chat/completions"))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
		return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
