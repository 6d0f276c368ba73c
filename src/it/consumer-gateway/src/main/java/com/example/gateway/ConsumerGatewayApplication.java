package com.example.gateway;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A user's gateway: nothing of DualMap's here, it arrives with the dependency.
 */
@SpringBootApplication
public class ConsumerGatewayApplication {

	public static void main(String[] args) {
		SpringApplication.run(ConsumerGatewayApplication.class, args);
	}

}
