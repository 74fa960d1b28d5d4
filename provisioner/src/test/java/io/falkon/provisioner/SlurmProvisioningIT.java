package io.falkon.provisioner;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.falkon.client.ClientOptions;
import io.falkon.client.FalkonClient;
import io.falkon.client.Instance;
import io.falkon.client.TaskResult;
import io.falkon.dispatcher.Dispatcher;
import io.falkon.dispatcher.DispatcherConfig;
import io.falkon.protocol.TaskSpec;
import io.falkon.provisioner.lrm.Shell;
import io.falkon.provisioner.lrm.SlurmAdapter;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Provisioning end to end through the real SLURM on localhost (two slurmd nodes): sbatch in, squeue empty at the end. */
class SlurmProvisioningIT extends ProvisioningContract {
    private final Shell shell = new Shell();

    @BeforeEach
    void slurm() throws Exception {
        Lrms.requireSlurm();
    }

    @Override
    LrmAdapter adapter() {
        return new SlurmAdapter(shell);
    }

    @Override
    int maxNodes() {
        return 2;
    }

    @Override
    void assertSchedulerIdle() throws Exception {
        assertThat(shell.check(List.of("squeue", "-h", "-o", "%i %j %T")).strip()).as("squeue").isEmpty();
    }

    /**
     * A task that asks for a GPU makes the provisioner ask Slurm for one ({@code --gres=gpu:1}), and
     * the executor on that node offers exactly the device Slurm gave the job (its CUDA_VISIBLE_DEVICES;
     * this machine has no GPU and no nvidia-smi, so it has no other way to offer one). The nodes'
     * two "gpu" devices are FAKE (Lrms.requireSlurm): nothing here touches a GPU.
     */
    @Test
    void aTaskAskingAGpuGetsANodeWithTheDeviceSlurmGaveIt() throws Exception {
        Dispatcher d = Dispatcher.start(DispatcherConfig.local());
        List<String> cmd = LrmAdapterContract.executorCommand(d.port(), work);
        Provisioner.Config config = new Provisioner.Config(new Planner.Bounds(0, 1, 1, 2, 600, 0.05, 1),
                AcquisitionPolicy.ALL_AT_ONCE, ReleasePolicy.distributed(Duration.ofSeconds(2)), cmd,
                Duration.ofMillis(200), work, "gpu", d.token());
        try (Provisioner p = Provisioner.start(config, adapter(), d::status);
             FalkonClient client = FalkonClient.connect("127.0.0.1:" + d.port(),
                     ClientOptions.defaults().withToken(d.token()));
             Instance in = client.createInstance("gpu")) {
            CompletableFuture<TaskResult> f = in.submit(TaskSpec.builder("/bin/sh", "-c",
                    "echo \"$CUDA_VISIBLE_DEVICES|$FALKON_RESOURCE_GPUS\"").gpus(1).build());
            TaskResult r = f.get(3, TimeUnit.MINUTES);
            assertThat(r.succeeded()).as(r.toString()).isTrue();
            String[] seen = r.stdout().strip().split("\\|", -1);
            assertThat(seen[0]).as("the task's CUDA_VISIBLE_DEVICES: one of the node's two (fake) devices")
                    .isIn("0", "1");
            assertThat(seen[1]).isEqualTo(seen[0]);
            Allocation a = p.allocations().get(0);
            String job = shell.check(List.of("scontrol", "show", "job", a.jobId()));
            assertThat(job).as("what Slurm holds for the job").containsPattern("TresPerNode=gres(/|:)gpu:1");
            assertThat(new ObjectMapper().readTree(d.status()).at("/executors/gpus").asLong())
                    .as("the executor offers the one device its job got, not the node's two").isEqualTo(1);
            await().atMost(Duration.ofSeconds(90)).until(() -> p.allocations().stream().noneMatch(Allocation::active));
        } finally {
            d.close();
        }
        assertSchedulerIdle();
    }
}
