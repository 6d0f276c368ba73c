/**
 * Spring Boot auto-configuration of the DualMap gateway: the {@code dualmap.*} properties
 * and the beans that plug the scheduler into Spring Cloud Gateway.
 */
@NullMarked
package io.github.dualmap.autoconfigure;

import org.jspecify.annotations.NullMarked;
