package com.example.llmgateway;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A user's gateway application in a package of its own: DualMap must arrive through
 * auto-configuration alone.
 */
@SpringBootApplication
public class ExampleGatewayApplication {

}
