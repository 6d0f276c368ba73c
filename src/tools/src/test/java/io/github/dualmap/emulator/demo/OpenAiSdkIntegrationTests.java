package io.github.dualmap.emulator.demo;

import java.util.ArrayList;
import java.util.List;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.errors.OpenAIServiceException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.completions.CompletionUsage;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import io.github.dualmap.DualMapApplication;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.UseMainMethod;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The official OpenAI Java SDK as the client of the demo: the gateway in front of its
 * pool of emulated vLLM instances, every request over real HTTP on loopback. Each answer
 * passes the SDK's own validation of the API's shapes (chat, streamed chat, completions,
 * the Responses API with a follow-up), a follow-up finds its prefix cached where the
 * gateway sent it, and the gateway's own errors and the engine's reach the SDK as its
 * typed exceptions with their type, code and param.
 */
@SpringBootTest(classes = DualMapApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		useMainMethod = UseMainMethod.ALWAYS, properties = "dualmap.max-body-size=64KB")
@ActiveProfiles("demo")
class OpenAiSdkIntegrationTests {

	private static final int INSTANCES = 4;

	private static final int BASE_PORT = FreePorts.consecutive(INSTANCES);

	private static final String MODEL = "meta-llama/Llama-3.1-8B-Instruct";

	/** A system prompt of several KV blocks, so a repeat finds a cached prefix. */
	private static final String SYSTEM = "You are a meticulous assistant who answers questions about distributed "
			+ "systems with care, precision and short examples. ".repeat(12);

	@DynamicPropertySource
	static void ports(DynamicPropertyRegistry registry) {
		FreePorts.demoPool(registry, BASE_PORT);
	}

	@LocalServerPort
	int port;

	private OpenAIClient client;

	@BeforeEach
	void client() {
		// No retries: every answer the test sees is the gateway's first.
		this.client = OpenAIOkHttpClient.builder()
			.baseUrl("http://127.0.0.1:" + this.port + "/v1")
			.apiKey("not-checked-by-the-demo")
			.maxRetries(0)
			.build();
	}

	@AfterEach
	void close() {
		this.client.close();
	}

	@Test
	void chatCompletionsPlainAndStreamedAndTheRepeatFindsItsPrefixCached() {
		ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
			.model(MODEL)
			.addSystemMessage(SYSTEM)
			.addUserMessage("Why does prefix caching matter for LLM serving?")
			.maxCompletionTokens(4)
			.build();
		HttpResponseFor<ChatCompletion> raw = this.client.chat().completions().withRawResponse().create(params);
		ChatCompletion completion = raw.parse().validate();
		assertThat(completion.choices()).singleElement()
			.satisfies(c -> assertThat(c.message().content()).hasValueSatisfying(t -> assertThat(t).isNotBlank()));
		assertThat(completion.usage()).hasValueSatisfying(u -> assertThat(u.completionTokens()).isEqualTo(4));
		// The gateway's request id names the completion, as vLLM's does.
		String requestId = raw.headers().values("x-request-id").get(0);
		assertThat(completion.id()).isEqualTo("chatcmpl-" + requestId);
		String instance = raw.headers().values("x-dualmap-instance").get(0);

		ChatCompletionCreateParams streamed = params.toBuilder()
			.streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
			.build();
		List<String> deltas = new ArrayList<>();
		List<CompletionUsage> usages = new ArrayList<>();
		String streamedOn;
		try (HttpResponseFor<StreamResponse<ChatCompletionChunk>> stream = this.client.chat()
			.completions()
			.withRawResponse()
			.createStreaming(streamed)) {
			streamedOn = stream.headers().values("x-dualmap-instance").get(0);
			stream.parse().stream().forEach(chunk -> {
				chunk.validate();
				chunk.choices().forEach(c -> c.delta().content().ifPresent(deltas::add));
				chunk.usage().ifPresent(usages::add);
			});
		}
		assertThat(String.join("", deltas)).isNotBlank();
		// The repeat goes where its prompt is cached, and the engine says so.
		assertThat(streamedOn).isEqualTo(instance);
		assertThat(usages).singleElement().satisfies(u -> {
			assertThat(u.completionTokens()).isEqualTo(4);
			assertThat(u.promptTokensDetails().flatMap(d -> d.cachedTokens())).hasValueSatisfying(
					cached -> assertThat(cached).isGreaterThan(SYSTEM.length() / 8).isLessThan(u.promptTokens()));
		});
	}

	@Test
	void completionsAndAResponsesFollowUpWhereItsConversationIsCached() {
		Completion completion = this.client.completions()
			.create(CompletionCreateParams.builder().model(MODEL).prompt(SYSTEM + " Say hello.").maxTokens(3).build())
			.validate();
		assertThat(completion.choices()).singleElement().satisfies(c -> assertThat(c.text()).isNotBlank());
		assertThat(completion.usage()).hasValueSatisfying(u -> assertThat(u.completionTokens()).isEqualTo(3));

		ResponseCreateParams first = ResponseCreateParams.builder()
			.model(MODEL)
			.instructions(SYSTEM)
			.input("Name one consistent-hashing pitfall.")
			.maxOutputTokens(16)
			.build();
		// Read, not validated: the SDK's schema requires usage fields vLLM does not send
		// (input_tokens_details.cache_write_tokens).
		HttpResponseFor<Response> answered = this.client.responses().withRawResponse().create(first);
		Response response = answered.parse();
		assertThat(response.output()).isNotEmpty();
		String instance = answered.headers().values("x-dualmap-instance").get(0);

		// The follow-up continues the stored conversation, which only the instance that
		// stored it holds: the gateway sends it there, and its whole transcript is
		// cached.
		HttpResponseFor<Response> followed = this.client.responses()
			.withRawResponse()
			.create(ResponseCreateParams.builder()
				.model(MODEL)
				.previousResponseId(response.id())
				.input("And how does a second ring help?")
				.maxOutputTokens(8)
				.build());
		Response followUp = followed.parse();
		assertThat(followed.headers().values("x-dualmap-instance")).containsExactly(instance);
		assertThat(followUp.usage()).hasValueSatisfying(u -> assertThat(u.inputTokensDetails().cachedTokens())
			.isGreaterThanOrEqualTo(response.usage().orElseThrow().inputTokens() - 64));
	}

	@Test
	void theGatewaysErrorsAndTheEnginesReachTheSdkAsItsTypedExceptions() {
		ChatCompletionCreateParams.Builder chat = ChatCompletionCreateParams.builder()
			.model(MODEL)
			.addUserMessage("One sentence on KV caches.")
			.maxCompletionTokens(2);

		// The gateway refuses a header it cannot read, before any instance sees it.
		assertThatExceptionOfType(BadRequestException.class)
			.isThrownBy(() -> this.client.chat()
				.completions()
				.create(chat.build().toBuilder().putAdditionalHeader("x-slo-ttft-ms", "soon").build()))
			.satisfies(ex -> {
				assertThat(ex.statusCode()).isEqualTo(400);
				assertThat(ex.type()).contains("invalid_request_error");
				assertThat(ex.param()).contains("x-slo-ttft-ms");
				assertThat(ex.getMessage()).contains("must be a positive integer of milliseconds but was 'soon'");
			});

		// A body over dualmap.max-body-size (64 KB here): 413 with the gateway's code.
		String large = "All work and no play. ".repeat(4000);
		assertThatExceptionOfType(OpenAIServiceException.class)
			.isThrownBy(() -> this.client.chat().completions().create(chat.addUserMessage(large).build()))
			.satisfies(ex -> {
				assertThat(ex.statusCode()).isEqualTo(413);
				assertThat(ex.code()).contains("request_too_large");
			});

		// A model the pool does not serve: the engine's own 404, passed through.
		assertThatExceptionOfType(NotFoundException.class)
			.isThrownBy(() -> this.client.chat()
				.completions()
				.create(ChatCompletionCreateParams.builder()
					.model("no-such-model")
					.addUserMessage("Hello?")
					.maxCompletionTokens(2)
					.build()))
			.satisfies(ex -> assertThat(ex.getMessage()).contains("no-such-model"));
	}

}
