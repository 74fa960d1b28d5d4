package io.falkon.transport.ws;

import io.falkon.dispatcher.admission.BadRequestLog;
import io.falkon.protocol.auth.HttpAuth;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One HTTP connection to the WS interface, on its Netty event loop: no thread waits for a slow or
 * idle client. A request must announce its length ({@code Content-Length}, at most the limit, and
 * within what all requests together may hold in memory) before any of its body is buffered, and
 * arrive whole within the request timeout; a connection with nothing to say is closed after the
 * idle timeout. While a request is being served the connection reads nothing more (no pipelining
 * past one request), and the request itself — parsing, the operation, the response — runs on the
 * worker pool or completes later without a thread (long-polls).
 */
final class WsHttpHandler extends ChannelInboundHandlerAdapter {
    private final WsService service;
    private final WsTransport.Settings settings;
    private final ExecutorService workers;
    private final AtomicLong bufferedBytes;
    private final long maxBufferedBytes;
    private final BadRequestLog badRequests;

    private HttpRequest request;
    private ByteBuf body;
    private long reserved;
    private boolean serving;
    private ScheduledFuture<?> deadline;

    WsHttpHandler(WsService service, WsTransport.Settings settings, ExecutorService workers, AtomicLong bufferedBytes,
                  long maxBufferedBytes, BadRequestLog badRequests) {
        this.service = service;
        this.settings = settings;
        this.workers = workers;
        this.bufferedBytes = bufferedBytes;
        this.maxBufferedBytes = maxBufferedBytes;
        this.badRequests = badRequests;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (serving) {
                return; // a pipelined request while one is served: dropped (the client sees the close)
            }
            if (msg instanceof HttpRequest req) {
                start(ctx, req);
            }
            if (msg instanceof HttpContent c && request != null && body != null) {
                if (body.readableBytes() + c.content().readableBytes() > reserved) {
                    refuse(ctx, HttpResponseStatus.BAD_REQUEST, "the body is longer than its Content-Length");
                    return;
                }
                body.writeBytes(c.content());
                if (msg instanceof LastHttpContent) {
                    finish(ctx);
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void start(ChannelHandlerContext ctx, HttpRequest req) {
        DecoderResult dr = req.decoderResult();
        if (dr.isFailure()) {
            refuse(ctx, HttpResponseStatus.BAD_REQUEST, "malformed HTTP request: " + dr.cause().getMessage());
            return;
        }
        request = req;
        deadline = ctx.executor().schedule(() -> refuse(ctx, HttpResponseStatus.REQUEST_TIMEOUT,
                "the request did not arrive whole within " + settings.requestTimeoutSeconds() + " s"),
                settings.requestTimeoutSeconds(), TimeUnit.SECONDS);
        long length = HttpUtil.getContentLength(req, -1L);
        boolean post = req.method().name().equals("POST");
        if (post && length < 0) {
            refuse(ctx, HttpResponseStatus.LENGTH_REQUIRED, "a POST needs a Content-Length");
            return;
        }
        if (length > settings.maxRequestBytes()) {
            refuse(ctx, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "the request is " + length + " bytes, over the "
                    + "limit of " + settings.maxRequestBytes() + " (falkon dispatcher --ws-max-request)");
            return;
        }
        long want = Math.max(0, length);
        long now = bufferedBytes.addAndGet(want);
        if (now > maxBufferedBytes && want > 0) {
            bufferedBytes.addAndGet(-want);
            refuse(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, "the service holds too many request bodies in memory "
                    + "now; retry shortly");
            return;
        }
        reserved = want;
        body = Unpooled.buffer((int) want, (int) want);
        if (HttpUtil.is100ContinueExpected(req)) {
            ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
        }
    }

    private void finish(ChannelHandlerContext ctx) {
        cancelDeadline();
        HttpRequest req = request;
        byte[] bytes = new byte[body.readableBytes()];
        body.readBytes(bytes);
        releaseBody();
        serving = true;
        ctx.channel().config().setAutoRead(false);
        QueryStringDecoder uri = new QueryStringDecoder(req.uri());
        String query = req.uri().indexOf('?') >= 0 ? req.uri().substring(req.uri().indexOf('?') + 1) : null;
        WsService.Request r = new WsService.Request(req.method().name(), uri.path(), query,
                req.headers().get(HttpHeaderNames.CONTENT_TYPE), req.headers().get("SOAPAction"),
                req.headers().get(HttpAuth.AUTHORIZATION), req.headers().get(HttpAuth.TOKEN_HEADER), bytes,
                String.valueOf(ctx.channel().remoteAddress()));
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        request = null;
        try {
            workers.execute(() -> {
                CompletableFuture<WsService.Response> served;
                try {
                    served = service.serve(r);
                } catch (RuntimeException | Error e) { // every request gets an answer, whatever went wrong
                    served = CompletableFuture.failedFuture(e);
                }
                served.whenComplete((resp, err) -> {
                    WsService.Response out = err == null ? resp : internalError();
                    ctx.executor().execute(() -> respond(ctx, out, keepAlive));
                });
            });
        } catch (RejectedExecutionException e) {
            respond(ctx, service.fault(WsService.Soap.V11, 503, false, "the service is busy; retry shortly"), false);
        }
    }

    /** The answer when serving failed unexpectedly: a Server fault, or plain text if even that fails. */
    private WsService.Response internalError() {
        try {
            return service.fault(WsService.Soap.V11, 500, false, "internal error in the dispatcher (see its log)");
        } catch (RuntimeException e) {
            return WsService.Response.of(500, "text/plain; charset=utf-8",
                    "internal error in the dispatcher (see its log)\n".getBytes(StandardCharsets.UTF_8));
        }
    }

    private void respond(ChannelHandlerContext ctx, WsService.Response resp, boolean keepAlive) {
        serving = false;
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(resp.status()),
                Unpooled.wrappedBuffer(resp.body()));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, resp.contentType());
        for (Map.Entry<String, String> h : resp.headers().entrySet()) {
            r.headers().set(h.getKey(), h.getValue());
        }
        HttpUtil.setContentLength(r, resp.body().length);
        HttpUtil.setKeepAlive(r, keepAlive);
        var written = ctx.writeAndFlush(r);
        if (!keepAlive) {
            written.addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.channel().config().setAutoRead(true);
        }
    }

    /** Answers with an error and closes: the rest of the request is not read. */
    private void refuse(ChannelHandlerContext ctx, HttpResponseStatus status, String why) {
        cancelDeadline();
        releaseBody();
        request = null;
        serving = true; // nothing more is read from this connection
        badRequests.refused("ws " + ctx.channel().remoteAddress(), status.code() + " " + why);
        byte[] text = (why + "\n").getBytes(StandardCharsets.UTF_8);
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(text));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
        r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        HttpUtil.setContentLength(r, text.length);
        ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
    }

    private void cancelDeadline() {
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
    }

    private void releaseBody() {
        if (body != null) {
            body.release();
            body = null;
        }
        if (reserved > 0) {
            bufferedBytes.addAndGet(-reserved);
            reserved = 0;
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            if (!serving && request == null) {
                ctx.close(); // idle between requests: a socket held open for nothing
            }
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelDeadline();
        releaseBody();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        badRequests.refused("ws " + ctx.channel().remoteAddress(), "connection failed: " + cause.getMessage());
        ctx.close();
    }
}
