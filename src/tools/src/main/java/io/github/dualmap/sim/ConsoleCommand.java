package io.github.dualmap.sim;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
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
		cli.getCommandSpec().version(version());
		// An option picocli cannot read: one line, as for every other bad input.
		cli.setParameterExceptionHandler((ex, line) -> {
			this.stderr.println(this.name + ": " + ex.getMessage() + " (" + this.name + " --help lists the options)");
			return USAGE;
		});
		cli.setExecutionExceptionHandler((ex, line, parsed) -> {
			this.stderr.println(this.name + ": " + message(ex));
			return USAGE;
		});
		return cli.execute(args);
	}

	/** The jar's version, from its manifest ({@code dev} when run from classes). */
	public static String version() {
		String v = ConsoleCommand.class.getPackage().getImplementationVersion();
		return "dualmap-gateway " + (v != null ? v : "dev");
	}

	/**
	 * An exception's message with its root cause's when that adds something (a bind
	 * failure's "Address already in use").
	 */
	static String message(Throwable ex) {
		Throwable root = ex;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		String message = String.valueOf(ex.getMessage());
		// Some causes have no message (an unresolved address): their type says it.
		String cause = root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
		return root == ex || message.contains(cause) ? message : message + ": " + cause;
	}

	/**
	 * Makes {@code dir} (and its parents) and checks a file can be written in it, so a
	 * run fails at once instead of after its work.
	 * @throws IllegalArgumentException naming the option and why
	 */
	protected static void writableDirectory(String option, Path dir) {
		if (dir.toString().isEmpty()) {
			// Path.of("") is the working directory: an empty value is a mistake, not
			// that.
			throw new IllegalArgumentException(option + " must name a directory but was ''");
		}
		try {
			Files.createDirectories(dir);
			Files.delete(Files.createTempFile(dir, ".write-check", ".tmp"));
		}
		catch (FileAlreadyExistsException ex) {
			throw new IllegalArgumentException(option + " " + dir + " is a file, not a directory");
		}
		catch (AccessDeniedException ex) {
			throw new IllegalArgumentException(option + " " + dir + " is not writable (permission denied)");
		}
		catch (IOException ex) {
			throw new IllegalArgumentException(option + " " + dir + " is not a writable directory ("
					+ ex.getClass().getSimpleName() + ": " + ex.getMessage() + ")");
		}
	}

}
