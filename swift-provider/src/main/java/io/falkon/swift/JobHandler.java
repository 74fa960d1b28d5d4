package io.falkon.swift;

import io.falkon.client.ClientOptions;
import io.falkon.protocol.auth.TokenSource;
import io.falkon.protocol.tls.Tls;
import io.falkon.swift.app.AppJob;
import io.falkon.swift.app.DispatcherLink;
import io.falkon.swift.app.Outcome;
import io.falkon.swift.app.WallTime;
import org.globus.cog.abstraction.impl.common.AbstractDelegatedTaskHandler;
import org.globus.cog.abstraction.impl.common.execution.JobException;
import org.globus.cog.abstraction.impl.common.task.IllegalSpecException;
import org.globus.cog.abstraction.impl.common.task.InvalidServiceContactException;
import org.globus.cog.abstraction.impl.common.task.TaskSubmissionException;
import org.globus.cog.abstraction.interfaces.JobSpecification;
import org.globus.cog.abstraction.interfaces.Service;
import org.globus.cog.abstraction.interfaces.Status;
import org.globus.cog.abstraction.interfaces.Task;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * One Swift job as a Falkon task. {@link #submit} copies what it needs out of the job
 * specification, queues the task on the site's {@link DispatcherLink} and reports SUBMITTED; it
 * never waits for the network. The outcome arrives later: COMPLETED, or FAILED with the app's exit
 * code in a {@link JobException} (Swift's {@code statusMode: "provider"}; with {@code "files"} the
 * wrapper exits 0 and Swift reads the app's status from files).
 */
public class JobHandler extends AbstractDelegatedTaskHandler {
    private volatile DispatcherLink.Submitted submitted;

    @Override
    public void submit(Task task) throws IllegalSpecException, InvalidServiceContactException, TaskSubmissionException {
        checkAndSetTask(task);
        if (!(task.getSpecification() instanceof JobSpecification spec)) {
            throw new IllegalSpecException("the falkon provider runs jobs; got " + task.getSpecification());
        }
        Service service = task.getService(0);
        if (service == null || service.getServiceContact() == null || service.getServiceContact().getContact() == null) {
            throw new InvalidServiceContactException("site without an execution URL: give execution { type: "
                    + "\"falkon\", URL: \"HOST:PORT\" } (the dispatcher's TCP address)");
        }
        AppJob job = job(spec);
        DispatcherLink link;
        try {
            link = DispatcherLink.of(new DispatcherLink.Options(address(service.getServiceContact().getContact()),
                    clientOptions(service)));
        } catch (RuntimeException e) {
            throw new TaskSubmissionException("cannot reach the Falkon dispatcher at "
                    + service.getServiceContact().getContact() + ": " + e.getMessage(), e);
        }
        submitted = link.submit(job, this::finished);
        task.setStatus(Status.SUBMITTED);
    }

    private void finished(Outcome o) {
        Task task = getTask();
        // Falkon does not say when a task starts; ACTIVE is reported as the outcome arrives
        task.setStatus(Status.ACTIVE);
        if (o.completed()) {
            task.setStatus(Status.COMPLETED);
        } else {
            failTask(o.message(), o.exitCode() >= 0 ? new JobException(o.message(), o.exitCode()) : new Exception(o.message()));
        }
    }

    /** HOST:PORT from the site's URL: {@code falkon://HOST:PORT} (Swift wants a URI), or HOST:PORT itself. */
    static String address(String url) {
        String a = url.trim();
        int scheme = a.indexOf("://");
        if (scheme >= 0) {
            a = a.substring(scheme + 3);
        }
        return a.endsWith("/") ? a.substring(0, a.length() - 1) : a;
    }

    static AppJob job(JobSpecification spec) throws IllegalSpecException {
        Map<String, String> env = new HashMap<>();
        for (String name : spec.getEnvironmentVariableNames()) {
            env.put(name, spec.getEnvironmentVariable(name));
        }
        Duration wallTime = null;
        Object w = spec.getAttribute("maxwalltime");
        try {
            if (w != null) {
                wallTime = WallTime.parse(w.toString());
            }
            return new AppJob(spec.getExecutable(), spec.getArgumentsAsList(), spec.getDirectory(), env, wallTime);
        } catch (IllegalArgumentException e) {
            throw new IllegalSpecException(e.getMessage());
        }
    }

    /**
     * The token as every Falkon client finds it ({@code $FALKON_TOKEN}, {@code $FALKON_TOKEN_FILE},
     * {@code ~/.falkon/token}), unless the site's {@code jobOptions} give {@code tokenFile} (or
     * {@code token}); {@code tlsCa} for a dispatcher with TLS.
     */
    static ClientOptions clientOptions(Service service) {
        String token = text(service, "token");
        String tokenFile = text(service, "tokenFile");
        String tlsCa = text(service, "tlsCa");
        ClientOptions o = ClientOptions.defaults().withClientName("swift")
                .withToken(TokenSource.system().forClient(token, tokenFile == null ? null : Path.of(tokenFile))
                        .token().value())
                .withMaxInFlight(Integer.MAX_VALUE);
        return tlsCa == null ? o : o.withTls(Tls.client(Path.of(tlsCa)));
    }

    private static String text(Service service, String name) {
        Object v = service.getAttribute(name);
        if (v == null) {
            v = service.getAttribute(name.toLowerCase()); // Swift may pass option names in lower case
        }
        return v == null || v.toString().isBlank() ? null : v.toString().trim();
    }

    /** Cancels the job: Falkon has no per-task cancellation yet, so its task runs on, unreported. */
    @Override
    public void cancel(String message) {
        DispatcherLink.Submitted s = submitted;
        if (s != null) {
            s.cancel();
        }
        getTask().setStatus(Status.CANCELED);
    }

    @Override
    public void suspend() throws TaskSubmissionException {
        throw new TaskSubmissionException("the falkon provider cannot suspend a job");
    }

    @Override
    public void resume() throws TaskSubmissionException {
        throw new TaskSubmissionException("the falkon provider cannot resume a job");
    }
}
