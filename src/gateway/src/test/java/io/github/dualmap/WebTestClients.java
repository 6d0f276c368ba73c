package io.github.dualmap;

import org.springframework.test.web.reactive.server.WebTestClient;

/** What several integration tests ask a running gateway over {@link WebTestClient}. */
public final class WebTestClients {

	private WebTestClients() {
	}

	/** The body of {@code GET uri}, which must answer 200. */
	public static String okBody(WebTestClient client, String uri) {
		return client.get()
			.uri(uri)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
	}

}
