package io.github.dualmap.core;

/**
 * The two homes of a routing key: one per ring. They differ whenever the pool has two or
 * more instances.
 */
public record Candidates(String first, String second) {
}
