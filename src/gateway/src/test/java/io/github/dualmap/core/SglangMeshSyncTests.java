package io.github.dualmap.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Two SGLang router replicas, each with its own pool and trees over the same workers. */
class SglangMeshSyncTests {

	private final PeerFixture replicaA = new PeerFixture("a", "b");

	private final PeerFixture replicaB = new PeerFixture("a", "b");

	private final SglangCacheAwarePolicy routerA = new SglangCacheAwarePolicy(replicaA.settings);

	private final SglangCacheAwarePolicy routerB = new SglangCacheAwarePolicy(replicaB.settings);

	private final PromptBlocks prompt = PeerFixture.prompt(1, 2, 3, 4);

	@Test
	void meshSyncMakesReplicaBRouteAPrefixThatReplicaASent() {
		// Replica A sends the prompt to a; replica B has one request of its own on a, so
		// without A's insert it sends the prompt to the less loaded b.
		PeerFixture.Routed sent = replicaA.route(routerA, replicaA.request(prompt));
		String target = sent.decision().instanceId();
		String other = target.equals("a") ? "b" : "a";
		replicaB.busy(routerB, target, 1);
		Decision before = routerB.choose(replicaB.request(prompt), replicaB.pool);
		assertThat(before.instanceId()).isEqualTo(other);
		assertThat(before.reason()).isEqualTo(Reason.LOAD);

		// The insert reaches B over the mesh.
		routerB.peerInserted(target, prompt, replicaB.pool);
		Decision after = routerB.choose(replicaB.request(prompt), replicaB.pool);
		assertThat(after.instanceId()).isEqualTo(target);
		assertThat(after.reason()).isEqualTo(Reason.AFFINITY);
		assertThat(after.cachedTokens()).isEqualTo(prompt.tokensFor(4));
		assertThat(routerB.treeBlocks(target)).isEqualTo(4);
	}

	@Test
	void anInsertForAnInstanceThatLeftIsDropped() {
		replicaB.members("b");
		routerB.onMembershipChanged(replicaB.pool);
		routerB.peerInserted("a", prompt, replicaB.pool);
		assertThat(routerB.treeBlocks("a")).isZero();
	}

}
