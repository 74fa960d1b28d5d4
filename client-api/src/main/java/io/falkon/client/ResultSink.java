package io.falkon.client;

import io.falkon.protocol.Message;

import java.util.List;

/** Receives an instance's results and its connection's ups and downs, on the connection's I/O thread. */
public interface ResultSink {

    void deliver(List<Message.DeliveredResult> results);

    /** The connection broke and was re-established: the instance should re-attach. */
    void reconnected();

    /** The connection broke for good: no more results will come. */
    void connectionLost(Throwable cause);
}
