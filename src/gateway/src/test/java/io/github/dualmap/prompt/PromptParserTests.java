package io.github.dualmap.prompt;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import io.github.dualmap.core.PrefixHasher;
import io.github.dualmap.core.PromptBlocks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class PromptParserTests {

	private static final String SYSTEM = "You are a careful assistant. ".repeat(40);

	private final PrefixHasher hasher = PrefixHasher.ofDefaults();

	private final PromptParser parser = new PromptParser(hasher, JsonMapper.shared());

	private ParsedRequest parse(String path, String json) {
		return parser.parse(path, json.getBytes(StandardCharsets.UTF_8));
	}

	private static String q(String json) {
		return json.replace('\'', '"');
	}

	@Test
	void completionWithStringPromptHashesTheText() {
		ParsedRequest r = parse("/v1/completions", q("{'model':'m','prompt':'" + SYSTEM + "'}"));
		assertThat(r.kind()).isEqualTo(RequestKind.COMPLETION);
		assertThat(r.model()).isEqualTo("m");
		assertThat(r.stream()).isFalse();
		assertThat(r.blocks()).isEqualTo(hasher.ofText("m", SYSTEM));
	}

	@Test
	void completionPathMayHavePrefixAndTrailingSlash() {
		assertThat(parse("/openai/v1/completions", q("{'prompt':'x'}")).kind()).isEqualTo(RequestKind.COMPLETION);
		assertThat(parse("/v1/completions/", q("{'prompt':'x'}")).kind()).isEqualTo(RequestKind.COMPLETION);
		assertThat(parse("/gw/v1/chat/completions", q("{'messages':[{'role':'user','content':'x'}]}")).kind())
			.isEqualTo(RequestKind.CHAT);
	}

	@Test
	void completionBatchKeysOnFirstPromptAndCountsTheWholeBatch() {
		String second = "another prompt entirely ".repeat(10);
		ParsedRequest r = parse("/v1/completions", q("{'model':'m','prompt':['" + SYSTEM + "','" + second + "']}"));
		PromptBlocks first = hasher.ofText("m", SYSTEM);
		assertThat(r.blocks().chain()).containsExactly(first.chain());
		assertThat(r.blocks().promptTokens())
			.isEqualTo(first.promptTokens() + hasher.ofText("m", second).promptTokens());
	}

	@Test
	void completionWithTokenIdsHashesTheIds() {
		ParsedRequest r = parse("/v1/completions", q("{'model':'m','prompt':[1,2,3,70000]}"));
		assertThat(r.blocks()).isEqualTo(hasher.ofTokens("m", new int[] { 1, 2, 3, 70000 }));
	}

	@Test
	void completionWithTokenIdArraysKeysOnFirstArray() {
		ParsedRequest r = parse("/v1/completions", q("{'model':'m','prompt':[[5,6,7],[5,6,8,9]]}"));
		PromptBlocks first = hasher.ofTokens("m", new int[] { 5, 6, 7 });
		assertThat(r.blocks().chain()).containsExactly(first.chain());
		assertThat(r.blocks().promptTokens()).isEqualTo(7);
	}

	@Test
	void streamFlagIsRead() {
		assertThat(parse("/v1/completions", q("{'prompt':'x','stream':true}")).stream()).isTrue();
		assertThat(parse("/v1/chat/completions", q("{'messages':[{'role':'user','content':'x'}],'stream':false}"))
			.stream()).isFalse();
	}

	@Test
	void modelSeparatesEqualPrompts() {
		PromptBlocks a = parse("/v1/completions", q("{'model':'a','prompt':'same'}")).blocks();
		PromptBlocks b = parse("/v1/completions", q("{'model':'b','prompt':'same'}")).blocks();
		PromptBlocks none = parse("/v1/completions", q("{'prompt':'same'}")).blocks();
		assertThat(a.keyAt(1)).isNotEqualTo(b.keyAt(1)).isNotEqualTo(none.keyAt(1));
		PromptBlocks chatA = parse("/v1/chat/completions",
				q("{'model':'a','messages':[{'role':'user','content':'x'}]}"))
			.blocks();
		PromptBlocks chatB = parse("/v1/chat/completions",
				q("{'model':'b','messages':[{'role':'user','content':'x'}]}"))
			.blocks();
		assertThat(chatA.keyAt(1)).isNotEqualTo(chatB.keyAt(1));
	}

	@Test
	void cacheSaltSeparatesEqualPromptsOnEveryPromptEndpoint() {
		for (String[] endpoint : new String[][] { { "/v1/completions", "'prompt':'" + SYSTEM + "'" },
				{ "/v1/chat/completions", "'messages':[{'role':'user','content':'" + SYSTEM + "'}]" },
				{ "/v1/responses", "'input':'" + SYSTEM + "'" } }) {
			String path = endpoint[0];
			String prompt = endpoint[1];
			PromptBlocks plain = parse(path, q("{'model':'m'," + prompt + "}")).blocks();
			PromptBlocks nullSalt = parse(path, q("{'model':'m','cache_salt':null," + prompt + "}")).blocks();
			PromptBlocks a = parse(path, q("{'model':'m','cache_salt':'tenant-a'," + prompt + "}")).blocks();
			PromptBlocks a2 = parse(path, q("{'model':'m','cache_salt':'tenant-a'," + prompt + "}")).blocks();
			PromptBlocks b = parse(path, q("{'model':'m','cache_salt':'tenant-b'," + prompt + "}")).blocks();
			assertThat(nullSalt).as(path).isEqualTo(plain);
			assertThat(a2).as(path).isEqualTo(a);
			// Like the engine's, the salt changes the first block, hence the whole chain.
			assertThat(a.keyAt(1)).as(path).isNotEqualTo(plain.keyAt(1)).isNotEqualTo(b.keyAt(1));
			assertThat(a.promptTokens()).as(path).isEqualTo(plain.promptTokens());
		}
		// The seed keeps model and salt apart.
		assertThat(PromptParser.seed("m", "x")).isNotEqualTo(PromptParser.seed("m", null))
			.isNotEqualTo(PromptParser.seed("mx", null))
			.isNotEqualTo(PromptParser.seed("n", "x"));
		assertThat(PromptParser.seed(null, null)).isEmpty();
	}

	@Test
	void modelOfReadsOnlyTheTopLevelModel() {
		assertThat(parser.modelOf(bytes(q("{'messages':[{'role':'user','content':'x','model':'inner'}],'model':'m'}"))))
			.isEqualTo("m");
		assertThat(parser.modelOf(bytes(q("{'metadata':{'model':'inner'}}")))).isNull();
		assertThat(parser.modelOf(bytes(q("{'model':7,'x':{'model':'inner'}}")))).isNull();
		assertThat(parser.modelOf(bytes(q("[{'model':'m'}]")))).isNull();
		assertThat(parser.modelOf(bytes("not json"))).isNull();
		assertThat(parser.modelOf(new byte[0])).isNull();
		// It stops at the model: what follows is never read, valid or not.
		assertThat(parser.modelOf(bytes(q("{'model':'m','messages':[")))).isEqualTo("m");
		assertThat(parser.modelOf(bytes("{\"a\":" + "[".repeat(1000) + "]".repeat(1000) + ",\"model\":\"m\"}")))
			.isNull();
	}

	@Test
	void requireJsonObjectRefusesWhatParseRefusesWithTheSameMessage() {
		parser.requireJsonObject(bytes(q("{'messages':[{'role':'user','content':'x'}]}")));
		for (String body : List.of("", "not json", "[1]", "\"text\"", "7", "null", "{\"a\":[1,")) {
			String expected = catchThrowableOfType(InvalidRequestException.class,
					() -> parser.parse("/v1/chat/completions", bytes(body)))
				.getMessage();
			assertThatExceptionOfType(InvalidRequestException.class).as(body)
				.isThrownBy(() -> parser.requireJsonObject(bytes(body)))
				.withMessage(expected);
		}
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> parser.requireJsonObject(bytes("[".repeat(600) + "]".repeat(600))))
			.withMessageContaining("dualmap.prompt.max-nesting-depth");
	}

	private static byte[] bytes(String s) {
		return s.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void chatWithStringContent() {
		ParsedRequest r = parse("/v1/chat/completions", q("{'model':'m','messages':[{'role':'system','content':'"
				+ SYSTEM + "'},{'role':'user','content':'hi'}]}"));
		assertThat(r.kind()).isEqualTo(RequestKind.CHAT);
		assertThat(r.model()).isEqualTo("m");
		assertThat(r.blocks().promptTokens()).isGreaterThan(SYSTEM.length() / 4);
	}

	@Test
	void chatMultiTurnSharesThePreviousRenderingAsPrefix() {
		String turn1 = "{'role':'system','content':'" + SYSTEM + "'},{'role':'user','content':'"
				+ "question one ".repeat(30) + "'}";
		String turn2 = turn1 + ",{'role':'assistant','content':'" + "answer one ".repeat(30)
				+ "'},{'role':'user','content':'question two'}";
		PromptBlocks first = parse("/v1/chat/completions", q("{'model':'m','messages':[" + turn1 + "]}")).blocks();
		PromptBlocks second = parse("/v1/chat/completions", q("{'model':'m','messages':[" + turn2 + "]}")).blocks();
		assertThat(second.depth()).isGreaterThan(first.depth());
		// Every full block of the first rendering reappears in the longer conversation.
		int full = first.depth() - 1;
		assertThat(full).isGreaterThan(2);
		assertThat(Arrays.copyOf(second.chain(), full)).containsExactly(Arrays.copyOf(first.chain(), full));
	}

	@Test
	void chatRenderingIsUnambiguousAcrossRolesAndContents() {
		PromptBlocks a = parse("/v1/chat/completions",
				q("{'messages':[{'role':'user','content':'ab'},{'role':'user','content':'c'}]}"))
			.blocks();
		PromptBlocks b = parse("/v1/chat/completions",
				q("{'messages':[{'role':'user','content':'a'},{'role':'user','content':'bc'}]}"))
			.blocks();
		PromptBlocks c = parse("/v1/chat/completions", q("{'messages':[{'role':'assistant','content':'ab'}]}"))
			.blocks();
		PromptBlocks d = parse("/v1/chat/completions", q("{'messages':[{'role':'user','content':'ab'}]}")).blocks();
		assertThat(a.keyAt(1)).isNotEqualTo(b.keyAt(1));
		assertThat(c.keyAt(1)).isNotEqualTo(d.keyAt(1));
	}

	@Test
	void chatTextPartsRenderLikeStringContent() {
		PromptBlocks parts = parse("/v1/chat/completions",
				q("{'messages':[{'role':'user','content':[{'type':'text','text':'hello'}]}]}"))
			.blocks();
		PromptBlocks string = parse("/v1/chat/completions", q("{'messages':[{'role':'user','content':'hello'}]}"))
			.blocks();
		assertThat(parts).isEqualTo(string);
	}

	@Test
	void chatImagesDifferByUrlAndByInlineData() {
		String template = "{'messages':[{'role':'user','content':[{'type':'text','text':'what is this'},"
				+ "{'type':'image_url','image_url':{'url':'%s'}}]}]}";
		PromptBlocks cat = parse("/v1/chat/completions", q(template.formatted("https://x/cat.png"))).blocks();
		PromptBlocks dog = parse("/v1/chat/completions", q(template.formatted("https://x/dog.png"))).blocks();
		PromptBlocks cat2 = parse("/v1/chat/completions", q(template.formatted("https://x/cat.png"))).blocks();
		PromptBlocks inline1 = parse("/v1/chat/completions",
				q(template.formatted("data:image/png;base64," + "A".repeat(5000))))
			.blocks();
		PromptBlocks inline2 = parse("/v1/chat/completions",
				q(template.formatted("data:image/png;base64," + "A".repeat(4999) + "B")))
			.blocks();
		assertThat(cat).isEqualTo(cat2);
		assertThat(cat.keyAt(1)).isNotEqualTo(dog.keyAt(1));
		assertThat(inline1.keyAt(1)).isNotEqualTo(inline2.keyAt(1));
		// Inline data is replaced by its hash, so it does not inflate the prompt.
		assertThat(inline1.promptTokens()).isLessThan(100);
	}

	@Test
	void chatAudioPartsDifferByData() {
		String template = "{'messages':[{'role':'user','content':[{'type':'input_audio','input_audio':{'data':'%s','format':'wav'}}]}]}";
		assertThat(parse("/v1/chat/completions", q(template.formatted("AAAA"))).blocks().keyAt(1))
			.isNotEqualTo(parse("/v1/chat/completions", q(template.formatted("AAAB"))).blocks().keyAt(1));
	}

	@Test
	void chatToolsComeFirstAndIgnoreKeyOrder() {
		String messages = "'messages':[{'role':'user','content':'weather?'}]";
		String tools1 = "'tools':[{'type':'function','function':{'name':'get_weather','parameters':{'type':'object'}}}]";
		String tools2 = "'tools':[{'function':{'parameters':{'type':'object'},'name':'get_weather'},'type':'function'}]";
		PromptBlocks a = parse("/v1/chat/completions", q("{" + messages + "," + tools1 + "}")).blocks();
		PromptBlocks b = parse("/v1/chat/completions", q("{" + tools2 + "," + messages + "}")).blocks();
		PromptBlocks none = parse("/v1/chat/completions", q("{" + messages + "}")).blocks();
		assertThat(a).isEqualTo(b);
		assertThat(a.keyAt(1)).isNotEqualTo(none.keyAt(1));
	}

	@Test
	void chatAssistantToolCallsWithoutContent() {
		ParsedRequest r = parse("/v1/chat/completions", q(
				"{'messages':[{'role':'user','content':'x'},{'role':'assistant','content':null,'tool_calls':[{'id':'c1','type':'function','function':{'name':'f','arguments':'{}'}}]},"
						+ "{'role':'tool','tool_call_id':'c1','content':'42'}]}"));
		assertThat(r.blocks()).isNotNull();
	}

	@Test
	void otherPathsCarryNoPrompt() {
		ParsedRequest embeddings = parse("/v1/embeddings", q("{'model':'e','input':'text'}"));
		assertThat(embeddings).isEqualTo(new ParsedRequest("e", false, null, RequestKind.OTHER));
		assertThat(parser.parse("/v1/models", new byte[0])).isEqualTo(ParsedRequest.other(null, false));
		assertThat(parse("/anything", "not json")).isEqualTo(ParsedRequest.other(null, false));
		assertThat(parse("/anything", "[1,2]")).isEqualTo(ParsedRequest.other(null, false));
		assertThat(parse("/v1/rerank", q("{'model':7,'stream':true}"))).isEqualTo(ParsedRequest.other(null, true));
		// Read as it streams by, no tree built: a large input costs no memory, and a
		// model
		// before a fault is still known.
		assertThat(parse("/v1/embeddings", "{\"input\":[\"" + "x".repeat(1_000_000) + "\"],\"model\":\"e\"}"))
			.isEqualTo(ParsedRequest.other("e", false));
		assertThat(parse("/v1/embeddings", "{\"model\":\"e\",\"input\":[1,"))
			.isEqualTo(ParsedRequest.other("e", false));
	}

	@Test
	void responsesKeyOnInstructionsAndInputAndReadTheStreamFlag() {
		ParsedRequest r = parse("/v1/responses",
				q("{'model':'m','stream':true,'instructions':'" + SYSTEM + "','input':'What is 2+2?'}"));
		assertThat(r.kind()).isEqualTo(RequestKind.RESPONSES);
		assertThat(r.model()).isEqualTo("m");
		assertThat(r.stream()).isTrue();
		ParsedRequest other = parse("/openai/v1/responses",
				q("{'model':'m','instructions':'" + SYSTEM + "','input':'Name a prime.'}"));
		assertThat(other.kind()).isEqualTo(RequestKind.RESPONSES);
		assertThat(other.stream()).isFalse();
		// One system prompt, two questions: the same leading blocks, different last ones.
		long[] a = r.blocks().chain();
		long[] b = other.blocks().chain();
		assertThat(a.length).isGreaterThan(2);
		assertThat(Arrays.copyOf(a, a.length - 1)).isEqualTo(Arrays.copyOf(b, b.length - 1));
		assertThat(a[a.length - 1]).isNotEqualTo(b[b.length - 1]);
		// Other instructions, another prompt.
		assertThat(parse("/v1/responses", q("{'model':'m','instructions':'Be terse.','input':'What is 2+2?'}")).blocks()
			.chain()[0]).isNotEqualTo(a[0]);
	}

	@Test
	void aResponsesConversationSentBackWithOneMoreTurnExtendsItsPrefix() {
		String first = "{'model':'m','instructions':'" + SYSTEM + "','tools':[{'type':'function','name':'weather'}],"
				+ "'input':[{'role':'user','content':'Weather in Paris?'}]}";
		String second = "{'model':'m','instructions':'" + SYSTEM + "','tools':[{'name':'weather','type':'function'}],"
				+ "'input':[{'role':'user','content':[{'type':'input_text','text':'Weather in Paris?'}]},"
				+ "{'type':'function_call','call_id':'c1','name':'weather','arguments':'{}'},"
				+ "{'type':'function_call_output','call_id':'c1','output':'" + "sunny, 21 degrees. ".repeat(60) + "'},"
				+ "{'type':'message','role':'assistant','id':'msg_1','content':[{'type':'output_text','text':'Sunny.'}]},"
				+ "{'role':'user','content':'And tomorrow?'}]}";
		PromptBlocks one = parse("/v1/responses", q(first)).blocks();
		PromptBlocks two = parse("/v1/responses", q(second)).blocks();
		// Key order in tools and a string against a single text part do not matter.
		int full = one.chain().length - 1;
		assertThat(full).isPositive();
		assertThat(Arrays.copyOf(two.chain(), full)).isEqualTo(Arrays.copyOf(one.chain(), full));
		// The function output counts by its length, not by a hash of it.
		assertThat(two.promptTokens()).isGreaterThan(one.promptTokens() + 200);
	}

	@Test
	void aResponsesImageByUrlAndByFileDifferAndItemsOfOtherTypesStillSeparatePrompts() {
		String byUrl = "{'input':[{'role':'user','content':[{'type':'input_image','image_url':'https://x/cat.png'}]}]}";
		String byFile = "{'input':[{'role':'user','content':[{'type':'input_image','file_id':'file-1'}]}]}";
		assertThat(parse("/v1/responses", q(byUrl)).blocks()).isNotEqualTo(parse("/v1/responses", q(byFile)).blocks());
		String a = "{'input':[{'type':'reasoning','id':'rs_1','summary':[]},{'role':'user','content':'x'}]}";
		String b = "{'input':[{'type':'reasoning','id':'rs_2','summary':[]},{'role':'user','content':'x'}]}";
		assertThat(parse("/v1/responses", q(a)).blocks()).isNotEqualTo(parse("/v1/responses", q(b)).blocks());
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', nullValues = "none", textBlock = """
			/v1/responses/resp_1                 | resp_1
			/openai/v1/responses/resp_1/         | resp_1
			/v1/responses/resp_1/cancel          | resp_1
			/v1/responses/resp_1/input_items     | resp_1
			/v1/responses                        | none
			/v1/responses/                       | none
			/v1/responses/resp_1/other           | none
			/v1/chat/completions                 | none
			""")
	void theResponseAPathAddresses(String path, String id) {
		assertThat(PromptParser.responseIdInPath(path)).isEqualTo(id);
	}

	@Test
	void aResponsesRequestWithoutInputOrInstructionsIsRoutedByLoad() {
		// A stored prompt template continuing an earlier response: nothing to key on
		// here.
		ParsedRequest r = parse("/v1/responses",
				q("{'model':'m','previous_response_id':'resp_1','prompt':{'id':'p'}}"));
		assertThat(r.kind()).isEqualTo(RequestKind.RESPONSES);
		assertThat(r.blocks()).isNull();
		assertThat(r.previousResponseId()).isEqualTo("resp_1");
		assertThat(parse("/v1/responses", q("{'input':'x'}")).previousResponseId()).isNull();
		// Only the Responses API continues stored responses.
		assertThat(parse("/v1/chat/completions",
				q("{'messages':[{'role':'user','content':'x'}],'previous_response_id':'resp_1'}"))
			.previousResponseId()).isNull();
		assertThat(parse("/v1/responses", q("{'instructions':'" + SYSTEM + "'}")).blocks()).isNotNull();
		// Other paths under /v1/responses (cancel, input items) are not prompts.
		assertThat(parse("/v1/responses/resp_1/cancel", "").kind()).isEqualTo(RequestKind.OTHER);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', quoteCharacter = '`',
			textBlock = """
					/v1/completions      | not json                                 | request body is not valid JSON        |
					/v1/completions      | [1,2]                                    | request body must be a JSON object but was an array |
					/v1/chat/completions | "text"                                   | request body must be a JSON object but was a string |
					/v1/chat/completions | {'model':'m'}                            | 'messages' is required                | messages
					/v1/chat/completions | {'messages':{'role':'user'}}             | 'messages' must be an array           | messages
					/v1/chat/completions | {'messages':[]}                          | 'messages' must not be empty          | messages
					/v1/chat/completions | {'messages':['hi']}                      | 'messages[0]' must be an object       | messages[0]
					/v1/chat/completions | {'messages':[{'content':'x'}]}           | 'messages[0].role' is required        | messages[0].role
					/v1/chat/completions | {'messages':[{'role':3,'content':'x'}]}  | 'messages[0].role' must be a non-empty string | messages[0].role
					/v1/chat/completions | {'messages':[{'role':'user','content':5}]} | 'messages[0].content' must be a string or an array of content parts but was a number | messages[0].content
					/v1/chat/completions | {'messages':[{'role':'user'}]}           | 'messages[0].content' is required for role 'user' | messages[0].content
					/v1/chat/completions | {'messages':[{'role':'user','content':[{'text':'x'}]}]} | 'messages[0].content[0].type' must be a string | messages[0].content[0].type
					/v1/chat/completions | {'messages':[{'role':'user','content':[{'type':'text','text':1}]}]} | 'messages[0].content[0].text' must be a string | messages[0].content[0].text
					/v1/chat/completions | {'messages':[{'role':'user','content':[{'type':'image_url'}]}]} | 'messages[0].content[0].image_url.url' must be a string | messages[0].content[0].image_url.url
					/v1/chat/completions | {'messages':[{'role':'user','content':'x'}],'tools':{}} | 'tools' must be an array | tools
					/v1/chat/completions | {'messages':[{'role':'user','content':'x'}],'model':1} | 'model' must be a string but was a number | model
					/v1/chat/completions | {'messages':[{'role':'user','content':'x'}],'stream':'yes'} | 'stream' must be a boolean but was a string | stream
					/v1/completions      | {'model':'m'}                            | 'prompt' is required                  | prompt
					/v1/completions      | {'prompt':{}}                            | 'prompt' must be a string, an array of strings, an array of token ids or an array of token-id arrays but was an object | prompt
					/v1/completions      | {'prompt':[]}                            | 'prompt' must not be an empty array   | prompt
					/v1/completions      | {'prompt':[1,2.5]}                       | 'prompt[1]' must be a non-negative integer token id but was 2.5 | prompt
					/v1/completions      | {'prompt':[1,'a']}                       | 'prompt[1]' must be a non-negative integer token id but was a string | prompt
					/v1/completions      | {'prompt':[1,-3]}                        | 'prompt[1]' must be a non-negative integer token id but was -3 | prompt
					/v1/completions      | {'prompt':[1,99999999999]}               | 'prompt[1]' must be a non-negative integer token id but was 99999999999 | prompt
					/v1/completions      | {'prompt':[[1],[2,'x']]}                 | 'prompt[1][1]' must be a non-negative integer token id but was a string | prompt
					/v1/completions      | {'prompt':['a',[1]]}                     | 'prompt[1]' must be a string like the other prompts | prompt
					/v1/completions      | {'prompt':[true]}                        | 'prompt[0]' must be a string, a token id or an array of token ids but was a boolean | prompt
					/v1/completions      | {'prompt':'x','stream':1}                | 'stream' must be a boolean but was a number | stream
					/v1/completions      | {'prompt_embeds':7}                      | 'prompt_embeds' must be a base64 string or a non-empty array of them but was a number | prompt_embeds
					/v1/completions      | {'prompt_embeds':[]}                     | 'prompt_embeds' must be a base64 string or a non-empty array of them but was an array | prompt_embeds
					/v1/completions      | {'prompt_embeds':['AAAA',1]}             | 'prompt_embeds' must be a base64 string or a non-empty array of them but was an array | prompt_embeds
					/v1/responses        | {'input':42}                             | 'input' must be a string or an array of input items but was a number | input
					/v1/responses        | {'input':'x','instructions':['a']}       | 'instructions' must be a string but was an array | instructions
					/v1/responses        | {'input':['hi']}                         | 'input[0]' must be an input item object | input[0]
					/v1/responses        | {'input':[{'type':7}]}                   | 'input[0].type' must be a string      | input[0].type
					/v1/responses        | {'input':[{'type':'message','content':'x'}]} | 'input[0].role' is required       | input[0].role
					/v1/responses        | {'input':[{'role':'user','content':[{'type':'input_text'}]}]} | 'input[0].content[0].text' must be a string | input[0].content[0].text
					/v1/responses        | {'input':[{'role':'user','content':[{'type':'input_image'}]}]} | 'input[0].content[0].image_url.url' must be a string | input[0].content[0].image_url.url
					/v1/responses        | {'input':'x','tools':'none'}             | 'tools' must be an array              | tools
					/v1/responses        | {'input':'x','stream':'yes'}             | 'stream' must be a boolean but was a string | stream
					/v1/responses        | {'input':'x','previous_response_id':7}   | 'previous_response_id' must be a string but was a number | previous_response_id
					/v1/chat/completions | {'messages':[{'role':'user','content':'x'}],'cache_salt':''} | 'cache_salt' must be a non-empty string if provided but was empty | cache_salt
					/v1/completions      | {'prompt':'x','cache_salt':42}           | 'cache_salt' must be a non-empty string if provided but was a number | cache_salt
					/v1/responses        | {'input':'x','cache_salt':['a']}         | 'cache_salt' must be a non-empty string if provided but was an array | cache_salt
					""")
	void malformedBodiesAreRefusedWith400(String path, String body, String message, String param) {
		assertThatExceptionOfType(InvalidRequestException.class).isThrownBy(() -> parse(path, q(body)))
			.satisfies((ex) -> {
				assertThat(ex.status()).isEqualTo(400);
				assertThat(ex.type()).isEqualTo("invalid_request_error");
				assertThat(ex.getMessage()).startsWith(message);
				assertThat(ex.param()).isEqualTo(param);
			});
	}

	@Test
	void emptyBodyOnKnownPathIsRefused() {
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> parser.parse("/v1/chat/completions", new byte[0]))
			.withMessage("request body is empty; expected a JSON object");
	}

	@Test
	void deepNestingIsRefusedCleanly() {
		String deep = "[".repeat(100_000) + "]".repeat(100_000);
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> parse("/v1/chat/completions", "{\"messages\":" + deep + "}"))
			.satisfies((ex) -> assertThat(ex.status()).isEqualTo(400))
			.withMessage("request body exceeds a parser limit: arrays and objects nest deeper than 500 levels"
					+ " (dualmap.prompt.max-nesting-depth)");
		// An unknown path is never refused, even with a hostile body.
		assertThat(parse("/v1/embeddings", deep).kind()).isEqualTo(RequestKind.OTHER);
	}

	@Test
	void promptEmbeddingsAreRoutedByLoad() {
		// vLLM takes prompt_embeds (--enable-prompt-embeds) without a prompt, or beside
		// an
		// empty one; a serialized tensor has no prefix to route on.
		for (String body : List.of("{'model':'m','prompt_embeds':'UEsDBAAACAgAAAAAAAAAAAAAAAAAAAAAAAA='}",
				"{'model':'m','prompt':'','prompt_embeds':['UEsDBAAA','UEsDBAAB']}",
				"{'model':'m','prompt':'the same text every time','prompt_embeds':'UEsDBAAA','stream':true}")) {
			ParsedRequest r = parse("/v1/completions", q(body));
			assertThat(r.kind()).isEqualTo(RequestKind.COMPLETION);
			assertThat(r.model()).isEqualTo("m");
			assertThat(r.blocks()).isNull();
		}
		assertThat(parse("/v1/completions", q("{'model':'m','prompt':'x','prompt_embeds':null}")).blocks()).isNotNull();
	}

	@Test
	void syntaxErrorsNameThePositionAndNoneOfTheParsersInternals() {
		for (String[] c : new String[][] {
				{ "{\"messages\":[1,2}", "Unexpected close marker '}': expected ']'", "(line 1, column 17)" },
				{ "{\"a\":1} {\"x\":1}", "more content after the JSON value", "(line 1, column 9)" },
				{ "{\"a\":\n tru}", "Unrecognized token 'tru'", "(line 2, column 2)" },
				{ "{'a':1}", "was expecting double-quote to start property name", "(line 1, column 2)" },
				{ "{\"messages\":NaN}", "Non-standard token 'NaN'", "(line 1, column 16)" } }) {
			assertThatExceptionOfType(InvalidRequestException.class)
				.isThrownBy(() -> parse("/v1/chat/completions", c[0]))
				.satisfies(ex -> assertThat(ex.getMessage()).startsWith("request body is not valid JSON: ")
					.contains(c[1])
					.endsWith(c[2])
					.doesNotContain("`")
					.doesNotContain("Source")
					.doesNotContain("jackson")
					.doesNotContain("#UNKNOWN"));
		}
	}

	@Test
	void theDefaultDepthTakesDeepJsonSchemas() {
		// A structured output schema 40 levels deep (over 80 nested objects and arrays).
		String schema = "{'type':'string'}";
		for (int i = 0; i < 40; i++) {
			schema = "{'type':'object','properties':{'c':{'type':'array','items':" + schema + "}}}";
		}
		String body = q("{'messages':[{'role':'user','content':'x'}],'tools':[{'type':'function','function':"
				+ "{'name':'f','parameters':" + schema + "}}],'response_format':{'type':'json_schema',"
				+ "'json_schema':{'name':'s','schema':" + schema + "}}}");
		assertThat(parse("/v1/chat/completions", body).blocks()).isNotNull();
		PromptParser shallow = new PromptParser(hasher, JsonMapper.shared(), 64, 1_000_000, 1000);
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> shallow.parse("/v1/chat/completions", body.getBytes()))
			.withMessage("request body exceeds a parser limit: arrays and objects nest deeper than 64 levels"
					+ " (dualmap.prompt.max-nesting-depth)");
	}

	@Test
	void tokenCountIsBounded() {
		PromptParser small = new PromptParser(hasher, JsonMapper.shared(), 16, 100, 1000);
		String ids = "1,".repeat(200) + "1";
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> small.parse("/v1/completions", ("{\"prompt\":[" + ids + "]}").getBytes()))
			.withMessage("request body exceeds a parser limit: more than 100 JSON tokens"
					+ " (values, names, brackets; dualmap.prompt.max-json-tokens)");
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> small.parse("/v1/completions", ("{\"prompt\":\"" + "x".repeat(2000) + "\"}").getBytes()))
			.withMessageStartingWith("request body exceeds a parser limit");
	}

	@Test
	void limitsAreValidated() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new PromptParser(hasher, JsonMapper.shared(), 2, 100, 100))
			.withMessageContaining("maxNestingDepth must be >= 4 but was 2");
		assertThatIllegalArgumentException().isThrownBy(() -> new PromptParser(hasher, JsonMapper.shared(), 8, 0, 100))
			.withMessageContaining("maxTokenCount must be > 0 but was 0");
	}

	@Test
	void invalidRequestBecomesOpenAiError() {
		InvalidRequestException ex = new InvalidRequestException("'model' must be a string", "model");
		assertThat(new String(ex.toError().toJson(), StandardCharsets.UTF_8)).isEqualTo(
				"{\"error\":{\"message\":\"'model' must be a string\",\"type\":\"invalid_request_error\",\"param\":\"model\",\"code\":null}}");
	}

	@Test
	void openAiErrorEscapesAndKeepsNulls() {
		OpenAiError error = new OpenAiError("bad \"quote\"\n", "server_error", null, "E1");
		assertThat(new String(error.toJson(), StandardCharsets.UTF_8)).isEqualTo(
				"{\"error\":{\"message\":\"bad \\\"quote\\\"\\n\",\"type\":\"server_error\",\"param\":null,\"code\":\"E1\"}}");
		assertThatIllegalArgumentException().isThrownBy(() -> new OpenAiError("", "t", null, null));
	}

	@Test
	void withoutThePromptOnlyTheTopLevelFieldsTheGatewayNeedsAreRead() {
		String text = "x".repeat(100_000);
		ParsedRequest chat = parser.withoutPrompt("/v1/chat/completions", ("{\"messages\":[{\"role\":\"user\","
				+ "\"content\":\"" + text + "\"}],\"model\":\"m\",\"stream\":true}")
			.getBytes(StandardCharsets.UTF_8));
		assertThat(chat.model()).isEqualTo("m");
		assertThat(chat.stream()).isTrue();
		assertThat(chat.blocks()).isNull();
		assertThat(chat.kind()).isEqualTo(RequestKind.CHAT);
		ParsedRequest responses = parser.withoutPrompt("/v1/responses",
				("{\"input\":\"" + text + "\",\"previous_response_id\":\"resp_1\"}").getBytes(StandardCharsets.UTF_8));
		assertThat(responses.previousResponseId()).isEqualTo("resp_1");
		assertThat(responses.stream()).isFalse();
		// A body cut short keeps what was read before the cut; nothing is refused.
		ParsedRequest cut = parser.withoutPrompt("/v1/completions",
				"{\"model\":\"m\",\"prompt\":\"abc".getBytes(StandardCharsets.UTF_8));
		assertThat(cut.model()).isEqualTo("m");
	}

}
