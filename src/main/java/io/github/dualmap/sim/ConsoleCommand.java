package io.github.dualmap.sim;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

import picocli.CommandLine;

/**
 * A picocli command of the exec jar: its output streams (standard out and error unless a
 * test redirects them) and how it runs. Bad input is the user's to fix: an exception ends
 * the command with one line on the error stream, prefixed with the command's name, and
 * exit code {@link #USAGE}; never a stack trace.
 *
 * @param <T> the command itself, for {@link #redirect}
 */
public abstract class ConsoleCommand<T extends ConsoleCommand<T>> implements Callable<Integer> {

	/** Exit code for bad input (options, files). */
	public static final int USAGE = 2;

	protected PrintWriter stdout = new PrintWriter(System.out, true);

	protected PrintWriter stderr = new PrintWriter(System.err, true);

	private final String name;

	protected ConsoleCommand(String name) {
		this.name = name;
	}

	/** Sends the command's output to {@code out} and {@code err}. */
	@SuppressWarnings("unchecked")
	public T redirect(PrintWriter out, PrintWriter err) {
		this.stdout = out;
		this.stderr = err;
		return (T) this;
	}

	/** Parses {@code args} and runs the command; returns the exit code. */
	public int runWith(String... args) {
		CommandLine cli = new CommandLine(this);
		cli.setOut(this.stdout);
		cli.setErr(this.stderr);
		cli.setExecutionExceptionHandler((ex, line, parsed) -> {
			this.stderr.println(this.name + ": " + ex.getMessage());
			return USAGE;
		});
		return cli.execute(args);
	}

}
