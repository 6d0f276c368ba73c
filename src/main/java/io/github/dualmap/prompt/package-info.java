/**
 * OpenAI-compatible request bodies to canonical prompt blocks, and OpenAI-style error
 * bodies.
 */
@NullMarked
package io.github.dualmap.prompt;

import org.jspecify.annotations.NullMarked;
