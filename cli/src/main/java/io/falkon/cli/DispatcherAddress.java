package io.falkon.cli;

import io.falkon.client.ClientOptions;
import io.falkon.client.DistributedClient;
import io.falkon.client.FalkonClient;
import io.falkon.executor.ConnectOptions;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/** Where a client command finds the dispatcher: its TCP port, or its Web Services interface. */
final class DispatcherAddress {

    @Option(names = "--dispatcher", required = true, paramLabel = "HOST:PORT[,HOST:PORT...]", description = "the "
            + "dispatcher (TCP); several, comma-separated, for distributed dispatchers (submit and status)")
    String dispatcher;

    @Option(names = "--dispatchers-file", required = true, paramLabel = "FILE", description = "the dispatchers "
            + "listed in FILE, one HOST:PORT per line, followed as it changes (falkon provision --layout tiered "
            + "keeps it; submit and status)")
    Path dispatchersFile;

    @Option(names = "--ws", required = true, paramLabel = "URL", description = "the dispatcher's Web Services "
            + "interface instead, e.g. http://HOST:PORT/axis2/services/Falkon (see falkon dispatcher --ws-port)")
    String ws;

    String address() {
        if (ws != null && !ws.startsWith("http://") && !ws.startsWith("https://")) {
            throw new Falkon.UserError("--ws takes an http:// URL, got '" + ws + "'");
        }
        if (dispatchersFile != null) {
            return DistributedClient.FILE_PREFIX + dispatchersFile.toAbsolutePath();
        }
        return ws != null ? ws : dispatcher;
    }

    /** A client of the dispatcher at {@code address}, presenting the token and using the TLS {@code connect} names. */
    static FalkonClient connect(String address, ConnectOptions connect) {
        return FalkonClient.connect(address, clientOptions(connect));
    }

    /** The command line's client options: its name, and the token and TLS {@code connect} names. */
    static ClientOptions clientOptions(ConnectOptions connect) {
        try {
            return ClientOptions.defaults().withClientName("falkon-cli").withToken(connect.token().token())
                    .withTls(connect.tls());
        } catch (IllegalArgumentException e) {
            throw new Falkon.UserError(e.getMessage());
        }
    }

    /** The dispatcher's status document; for several, their sums and each one's (see {@link DistributedClient#status}). */
    static String status(String address, ConnectOptions connect) {
        if (DistributedClient.isDistributed(address)) {
            try (DistributedClient c = DistributedClient.connect(address, clientOptions(connect))) {
                return c.status();
            }
        }
        try (FalkonClient c = connect(address, connect)) {
            return c.status();
        }
    }
}
