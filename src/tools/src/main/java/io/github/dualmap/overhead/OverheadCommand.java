package io.github.dualmap.overhead;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.dualmap.core.DualMapPolicy;
import io.github.dualmap.sim.ConsoleCommand;
import io.github.dualmap.sim.SetOptionBinder;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The {@code overhead} command of the exec jar: starts instant backends, a stock Spring
 * Cloud Gateway (Spring's round-robin load balancer) and a DualMap gateway in one process
 * on loopback, and drives the same chat requests through a direct call, the stock gateway
 * and the DualMap gateway, in turn, round after round; prints a markdown table of
 * throughput and latency with the DualMap/stock ratios and writes {@code overhead.json}.
 * Everything shares the machine's cores, so the figures are what each path costs in CPU
 * and latency relative to the others, not absolute capacities. Bad input ends with exit
 * code 2.
 */
@Command(name = "overhead", mixinStandardHelpOptions = true, sortOptions = false,
		description = "What the gateway adds per request: a direct call, the stock Spring Cloud Gateway "
				+ "and the DualMap gateway side by side on loopback.")
public final class OverheadCommand extends ConsoleCommand<OverheadCommand> {

	/** File written into {@code --out}. */
	public static final String JSON_FILE = "overhead.json";

	/**
	 * {@code --set} properties refused, with what decides them: the command sets them
	 * itself, or they would make the "dualmap-gateway" row something else than the report
	 * says (another dispatch mode, a stock gateway, another policy, other backends).
	 */
	private static final Map<String, String> DECIDED_BY_OVERHEAD = Map.of("dualmap.dispatch.mode", "--dispatch-mode",
			"dualmap.pools.pool.dispatch.mode", "--dispatch-mode", "dualmap.enabled",
			"the comparison (the dualmap-gateway row runs DualMap)", "dualmap.policy", "--policy",
			"dualmap.pools.pool.policy", "--policy", "dualmap.services", "the backends overhead starts");

	private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

	@Option(names = "--requests", defaultValue = "2000",
			description = "requests per path and round (default ${DEFAULT-VALUE})")
	int requests;

	@Option(names = "--rounds", defaultValue = "5",
			description = "measured rounds, each path once per round in rotating order, after the "
					+ "warm-up rounds (default ${DEFAULT-VALUE})")
	int rounds;

	@Option(names = "--warmup-rounds", defaultValue = "20",
			description = "unmeasured rounds first, each path once per round in rotating order, so that "
					+ "the JIT has compiled every path before the measured rounds (default ${DEFAULT-VALUE})")
	int warmupRounds;

	@Option(names = "--concurrency", defaultValue = "16", description = "requests in flight (default ${DEFAULT-VALUE})")
	int concurrency;

	@Option(names = "--backends", defaultValue = "4", description = "backend instances (default ${DEFAULT-VALUE})")
	int backends;

	@Option(names = "--prompt-chars", defaultValue = "4000",
			description = "characters of each request's system prompt (default ${DEFAULT-VALUE})")
	int promptChars;

	@Option(names = "--prompts", defaultValue = "64",
			description = "distinct system prompts the requests cycle through (default ${DEFAULT-VALUE})")
	int prompts;

	@Option(names = "--stream", description = "streamed requests (SSE) instead of plain JSON responses")
	boolean stream;

	@Option(names = "--dispatch-mode", defaultValue = "queue",
			description = "the DualMap gateway's dualmap.dispatch.mode (default ${DEFAULT-VALUE})")
	String dispatchMode;

	@Option(names = "--policy", defaultValue = "dualmap",
			description = "the DualMap gateway's dualmap.policy, one of the DualMap family, e.g. dualmap-directory "
					+ "(default ${DEFAULT-VALUE})")
	String policy;

	@Option(names = "--set", paramLabel = "PROPERTY=VALUE",
			description = "a dualmap.* property of the DualMap gateway, repeatable, e.g. "
					+ "dualmap.dispatch.max-prefill-tokens=65536 (dualmap.dispatch.mode, enabled, policy "
					+ "and services are refused: options and the comparison decide them)")
	List<String> set = new ArrayList<>();

	@Option(names = "--out", paramLabel = "DIR", description = "write " + JSON_FILE + " here")
	@Nullable Path out;

	public OverheadCommand() {
		super("overhead");
	}

	/** Runs the command with {@code args}; returns the exit code. */
	public static int run(String... args) {
		return new OverheadCommand().runWith(args);
	}

	@Override
	public Integer call() {
		try {
			validate();
			if (this.out != null) {
				writableDirectory("--out", this.out);
			}
		}
		catch (IllegalArgumentException ex) {
			this.stderr.println("overhead: " + ex.getMessage());
			return USAGE;
		}
		List<InstantBackend> pool = new ArrayList<>();
		List<ConfigurableApplicationContext> gateways = new ArrayList<>();
		try {
			for (int i = 0; i < this.backends; i++) {
				pool.add(new InstantBackend());
			}
			ConfigurableApplicationContext stock = gateway(pool, false);
			gateways.add(stock);
			ConfigurableApplicationContext dualMap = gateway(pool, true);
			gateways.add(dualMap);
			List<LoadDriver.Target> targets = List.of(
					new LoadDriver.Target("direct", pool.stream().map(InstantBackend::baseUrl).toList()),
					new LoadDriver.Target("stock-gateway", List.of("http://127.0.0.1:" + port(stock))),
					new LoadDriver.Target("dualmap-gateway", List.of("http://127.0.0.1:" + port(dualMap))));
			LoadDriver driver = new LoadDriver(bodies(), this.concurrency);
			try {
				Map<String, List<LoadDriver.Round>> results = driver.measure(targets, this.requests, this.warmupRounds,
						this.rounds);
				Report report = Report.of(results);
				this.stdout.print(report.markdown(this));
				this.stdout.flush();
				if (this.out != null) {
					Files.createDirectories(this.out);
					Files.writeString(this.out.resolve(JSON_FILE),
							JSON.writeValueAsString(report.json(this, results)) + "\n");
				}
				return report.errors() == 0 ? 0 : 1;
			}
			finally {
				driver.close();
			}
		}
		catch (IOException ex) {
			this.stderr.println("overhead: cannot write " + JSON_FILE + ": " + ex.getMessage());
			return USAGE;
		}
		finally {
			gateways.forEach(ConfigurableApplicationContext::close);
			pool.forEach(InstantBackend::close);
		}
	}

	private void validate() {
		positive("--requests", this.requests);
		positive("--rounds", this.rounds);
		if (this.warmupRounds < 0) {
			throw new IllegalArgumentException("--warmup-rounds must be >= 0 but was " + this.warmupRounds);
		}
		positive("--concurrency", this.concurrency);
		positive("--backends", this.backends);
		positive("--prompt-chars", this.promptChars);
		positive("--prompts", this.prompts);
		if (!List.of("queue", "pass-through").contains(this.dispatchMode)) {
			throw new IllegalArgumentException(
					"--dispatch-mode must be queue or pass-through but was '" + this.dispatchMode + "'");
		}
		List<String> family = Arrays.stream(DualMapPolicy.Variant.values())
			.map(DualMapPolicy.Variant::policyName)
			.toList();
		if (!family.contains(this.policy)) {
			throw new IllegalArgumentException(
					"--policy must be one of " + String.join(", ", family) + " but was '" + this.policy + "'");
		}
		// Bound as the gateway will bind them, so a bad one is one line before any
		// backend or gateway starts, not Spring's startup failure after.
		SetOptionBinder.bind(this.set, "overhead", DECIDED_BY_OVERHEAD);
	}

	private static void positive(String option, int value) {
		if (value <= 0) {
			throw new IllegalArgumentException(option + " must be > 0 but was " + value);
		}
	}

	/**
	 * The request bodies: {@code --prompts} system prompts, each with its own questions.
	 */
	private List<byte[]> bodies() {
		List<byte[]> out = new ArrayList<>();
		int distinct = Math.max(this.prompts, Math.min(this.requests, 4096));
		for (int i = 0; i < distinct; i++) {
			String topic = "topic " + (i % this.prompts) + ". ";
			String system = topic.repeat(this.promptChars / topic.length() + 1).substring(0, this.promptChars);
			String body = "{\"model\":\"m\",\"stream\":" + this.stream + ",\"max_tokens\":2,\"messages\":["
					+ "{\"role\":\"system\",\"content\":\"" + system + "\"},"
					+ "{\"role\":\"user\",\"content\":\"question " + i + "\"}]}";
			out.add(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
		}
		return out;
	}

	private ConfigurableApplicationContext gateway(List<InstantBackend> pool, boolean dualMap) {
		List<String> properties = new ArrayList<>(
				List.of("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
						"logging.level.root=WARN", "spring.cloud.gateway.server.webflux.routes[0].id=llm",
						"spring.cloud.gateway.server.webflux.routes[0].uri=lb://pool",
						"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**",
						"management.endpoints.web.exposure.include=health"));
		for (int i = 0; i < pool.size(); i++) {
			properties
				.add("spring.cloud.discovery.client.simple.instances.pool[" + i + "].uri=" + pool.get(i).baseUrl());
		}
		if (dualMap) {
			properties.addAll(List.of("dualmap.services=pool", "dualmap.dispatch.mode=" + this.dispatchMode,
					"dualmap.policy=" + this.policy));
			properties.addAll(this.set);
		}
		else {
			properties.add("dualmap.enabled=false");
		}
		return new SpringApplicationBuilder(Gateway.class).web(WebApplicationType.REACTIVE)
			.logStartupInfo(false)
			.properties(properties.toArray(String[]::new))
			.run();
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	/** What was measured, per path: medians over the rounds. */
	record Report(List<Row> rows, long errors) {

		/**
		 * Below this {@link #cpuDrift} (with every round of the second half below every
		 * round of the first, {@link #stillFalling}) the report warns that a path was not
		 * at steady state.
		 */
		static final double STEADY = 0.9;

		static Report of(Map<String, List<LoadDriver.Round>> results) {
			List<Row> rows = new ArrayList<>();
			long errors = 0;
			for (Map.Entry<String, List<LoadDriver.Round>> e : results.entrySet()) {
				List<LoadDriver.Round> r = e.getValue();
				double drift = cpuDrift(r);
				rows.add(new Row(e.getKey(), median(r, LoadDriver.Round::throughput),
						median(r, LoadDriver.Round::p50Micros), median(r, LoadDriver.Round::p90Micros),
						median(r, LoadDriver.Round::p99Micros), r.stream().mapToLong(LoadDriver.Round::errors).sum(),
						median(r, LoadDriver.Round::cpuMicrosPerRequest), drift, stillFalling(r, drift)));
				errors += rows.get(rows.size() - 1).errors();
			}
			return new Report(rows, errors);
		}

		/**
		 * The median CPU per request of the second half of {@code rounds} over the first
		 * half's (the middle round of an odd count in neither); NaN for fewer than two
		 * rounds. Well below 1 the path was still warming up as it was measured.
		 */
		static double cpuDrift(List<LoadDriver.Round> rounds) {
			int half = rounds.size() / 2;
			if (half == 0) {
				return Double.NaN;
			}
			return median(rounds.subList(rounds.size() - half, rounds.size()), LoadDriver.Round::cpuMicrosPerRequest)
					/ median(rounds.subList(0, half), LoadDriver.Round::cpuMicrosPerRequest);
		}

		/**
		 * Whether the CPU per request of {@code rounds}, whose {@link #cpuDrift} is
		 * {@code drift}, still fell as they were measured: the second half's median is
		 * more than a tenth below the first half's ({@link #STEADY}) and every round of
		 * the second half is below every round of the first, so that one round with a
		 * collection in it does not pass for a trend.
		 */
		static boolean stillFalling(List<LoadDriver.Round> rounds, double drift) {
			int half = rounds.size() / 2;
			if (half == 0 || !(drift < STEADY)) {
				return false;
			}
			double firstLowest = rounds.subList(0, half)
				.stream()
				.mapToDouble(LoadDriver.Round::cpuMicrosPerRequest)
				.min()
				.orElseThrow();
			return rounds.subList(rounds.size() - half, rounds.size())
				.stream()
				.allMatch(r -> r.cpuMicrosPerRequest() < firstLowest);
		}

		private static double median(List<LoadDriver.Round> rounds,
				java.util.function.ToDoubleFunction<LoadDriver.Round> f) {
			double[] v = rounds.stream().mapToDouble(f).sorted().toArray();
			int n = v.length;
			return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		}

		/** DualMap gateway over stock gateway. */
		Ratios ratios() {
			Row d = row("dualmap-gateway");
			Row s = row("stock-gateway");
			return new Ratios(d.throughput() / s.throughput(), d.p50Micros() / s.p50Micros(),
					d.p99Micros() / s.p99Micros(), gatewayCpuMicros(d) / gatewayCpuMicros(s));
		}

		/**
		 * CPU per request a gateway adds: its path's process CPU per request less the
		 * direct path's (the client and the backends do the same work on every path).
		 */
		double gatewayCpuMicros(Row gateway) {
			return gateway.cpuMicros() - row("direct").cpuMicros();
		}

		Row row(String name) {
			return this.rows.stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
		}

		String markdown(OverheadCommand c) {
			StringBuilder sb = new StringBuilder();
			sb.append(String.format(Locale.ROOT,
					"%d backends, %d requests x %d rounds per path after %d warm-up round%s, %d in flight, "
							+ "%d-char prompts, %s, DualMap %s, dispatch %s (medians over rounds)%n%n",
					c.backends, c.requests, c.rounds, c.warmupRounds, c.warmupRounds == 1 ? "" : "s", c.concurrency,
					c.promptChars, c.stream ? "streamed" : "JSON", c.policy, c.dispatchMode));
			sb.append("| path | throughput (req/s) | p50 (ms) | p90 (ms) | p99 (ms) | CPU / request (us) | errors |\n");
			sb.append("|---|---:|---:|---:|---:|---:|---:|\n");
			for (Row r : this.rows) {
				sb.append(String.format(Locale.ROOT, "| %s | %.0f | %.3f | %.3f | %.3f | %.0f | %d |%n", r.name(),
						r.throughput(), r.p50Micros() / 1000, r.p90Micros() / 1000, r.p99Micros() / 1000, r.cpuMicros(),
						r.errors()));
			}
			Row d = row("dualmap-gateway");
			Row s = row("stock-gateway");
			Row direct = row("direct");
			Ratios r = ratios();
			sb.append(String.format(Locale.ROOT,
					"%nDualMap / stock gateway: throughput %.2fx, p50 %.2fx, p99 %.2fx, gateway CPU per request "
							+ "%.2fx; added over a direct call: p50 stock %.3f ms, DualMap %.3f ms; CPU per request "
							+ "stock %.0f us, DualMap %.0f us%n",
					r.throughput(), r.p50(), r.p99(), r.cpu(), (s.p50Micros() - direct.p50Micros()) / 1000,
					(d.p50Micros() - direct.p50Micros()) / 1000, gatewayCpuMicros(s), gatewayCpuMicros(d)));
			if (!Double.isNaN(direct.cpuDrift())) {
				sb.append(String.format(Locale.ROOT,
						"CPU per request, second half of the rounds over the first: direct %.2fx, stock %.2fx, "
								+ "DualMap %.2fx%n",
						direct.cpuDrift(), s.cpuDrift(), d.cpuDrift()));
				for (Row row : this.rows) {
					if (row.stillFalling()) {
						sb.append(String.format(Locale.ROOT,
								"warning: %s's CPU per request still fell %.0f %% during the measured rounds: not "
										+ "at steady state; run more --warmup-rounds%n",
								row.name(), 100 * (1 - row.cpuDrift())));
					}
				}
			}
			return sb.toString();
		}

		Map<String, Object> json(OverheadCommand c, Map<String, List<LoadDriver.Round>> results) {
			Map<String, Object> out = new LinkedHashMap<>();
			out.put("backends", c.backends);
			out.put("requests_per_round", c.requests);
			out.put("rounds", c.rounds);
			out.put("warmup_rounds", c.warmupRounds);
			out.put("concurrency", c.concurrency);
			out.put("prompt_chars", c.promptChars);
			out.put("stream", c.stream);
			out.put("dispatch_mode", c.dispatchMode);
			out.put("policy", c.policy);
			List<Map<String, Object>> paths = new ArrayList<>();
			for (Row r : this.rows) {
				Map<String, Object> p = new LinkedHashMap<>();
				p.put("name", r.name());
				p.put("throughput_rps", r.throughput());
				p.put("p50_ms", r.p50Micros() / 1000);
				p.put("p90_ms", r.p90Micros() / 1000);
				p.put("p99_ms", r.p99Micros() / 1000);
				p.put("errors", r.errors());
				p.put("cpu_us_per_request", r.cpuMicros());
				if (!Double.isNaN(r.cpuDrift())) {
					p.put("cpu_second_half_over_first", r.cpuDrift());
				}
				if (!r.name().equals("direct")) {
					p.put("gateway_cpu_us_per_request", gatewayCpuMicros(r));
				}
				p.put("rounds", results.get(r.name()));
				paths.add(p);
			}
			out.put("paths", paths);
			Ratios r = ratios();
			Map<String, Object> ratios = new LinkedHashMap<>();
			ratios.put("throughput", r.throughput());
			ratios.put("p50", r.p50());
			ratios.put("p99", r.p99());
			ratios.put("gateway_cpu", r.cpu());
			out.put("dualmap_over_stock", ratios);
			return out;
		}

	}

	record Ratios(double throughput, double p50, double p99, double cpu) {

	}

	/**
	 * One path's medians over the measured rounds; {@code cpuDrift} is
	 * {@link Report#cpuDrift}, {@code stillFalling} {@link Report#stillFalling}.
	 */
	record Row(String name, double throughput, double p50Micros, double p90Micros, double p99Micros, long errors,
			double cpuMicros, double cpuDrift, boolean stillFalling) {

	}

	/** A gateway application with auto-configuration only: what a user's gateway is. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Gateway {

	}

}
