/**
 * Spring Cloud Gateway glue: the body-reading filter, the DualMap
 * {@code ReactorServiceInstanceLoadBalancer}, request accounting on complete, error and
 * cancel, per-instance circuit breakers, connect failover and engine scraping.
 */
@NullMarked
package io.github.dualmap.gateway;

import org.jspecify.annotations.NullMarked;
