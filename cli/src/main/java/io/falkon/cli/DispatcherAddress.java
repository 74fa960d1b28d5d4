package io.falkon.cli;

import picocli.CommandLine.Option;

/** Where a client command finds the dispatcher: its TCP port, or its Web Services interface. */
final class DispatcherAddress {

    @Option(names = "--dispatcher", required = true, paramLabel = "HOST:PORT", description = "the dispatcher (TCP)")
    String dispatcher;

    @Option(names = "--ws", required = true, paramLabel = "URL", description = "the dispatcher's Web Services "
            + "interface instead, e.g. http://HOST:PORT/axis2/services/Falkon (see falkon dispatcher --ws-port)")
    String ws;

    String address() {
        if (ws != null && !ws.startsWith("http://") && !ws.startsWith("https://")) {
            throw new Falkon.UserError("--ws takes an http:// URL, got '" + ws + "'");
        }
        return ws != null ? ws : dispatcher;
    }
}
