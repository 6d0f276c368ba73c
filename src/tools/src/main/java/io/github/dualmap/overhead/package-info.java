/**
 * The {@code overhead} command: what the gateway adds to a request, measured side by side
 * against a direct call and the stock Spring Cloud Gateway on loopback.
 */
@NullMarked
package io.github.dualmap.overhead;

import org.jspecify.annotations.NullMarked;
