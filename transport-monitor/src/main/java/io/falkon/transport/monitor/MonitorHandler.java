package io.falkon.transport.monitor;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.protocol.auth.HttpAuth;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.codec.http.cookie.Cookie;
import io.netty.handler.codec.http.cookie.CookieHeaderNames.SameSite;
import io.netty.handler.codec.http.cookie.DefaultCookie;
import io.netty.handler.codec.http.cookie.ServerCookieDecoder;
import io.netty.handler.codec.http.cookie.ServerCookieEncoder;
import io.netty.handler.timeout.IdleStateEvent;

import java.nio.charset.StandardCharsets;

/**
 * One connection to the monitoring port, on its event loop. Every request is authenticated here,
 * in one place: a bearer token (or {@code X-Falkon-Token}) through the dispatcher's
 * {@link Admission}, or the session cookie a browser got by opening {@code /?token=TOKEN} once
 * (answered with a redirect to {@code /}, so the token leaves the address bar and history).
 * Only GET and HEAD are served; nothing is read from a request beyond its headers.
 */
final class MonitorHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    static final String COOKIE = "falkon_session";
    /** No inline script or style, nothing from elsewhere: the page runs only its own files. */
    private static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

    private final MonitorTransport monitor;
    private final Admission admission;
    private final RequestDeadline deadline;
    private final boolean tls;

    MonitorHandler(MonitorTransport monitor, Admission admission, RequestDeadline deadline, boolean tls) {
        this.monitor = monitor;
        this.admission = admission;
        this.deadline = deadline;
        this.tls = tls;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        deadline.complete();
        if (!req.decoderResult().isSuccess()) {
            Throwable why = req.decoderResult().cause();
            HttpResponseStatus status = why instanceof TooLongHttpHeaderException
                    ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
                    : why instanceof TooLongHttpLineException ? HttpResponseStatus.REQUEST_URI_TOO_LONG
                    : HttpResponseStatus.BAD_REQUEST;
            send(ctx, req, text(status, "malformed request: " + status.reasonPhrase()), false);
            return;
        }
        if (req.method() != HttpMethod.GET && req.method() != HttpMethod.HEAD) {
            FullHttpResponse r = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "only GET and HEAD are served here");
            r.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
            send(ctx, req, r, false);
            return;
        }
        QueryStringDecoder uri = new QueryStringDecoder(req.uri());
        String path = uri.path();
        String from = "http " + ctx.channel().remoteAddress();
        if (path.equals("/") && uri.parameters().containsKey("token")) {
            login(ctx, req, from, uri.parameters().get("token").get(0));
            return;
        }
        if (!authenticated(req, from)) {
            FullHttpResponse r = path.equals("/") ? html(HttpResponseStatus.UNAUTHORIZED, Assets.LOGIN)
                    : text(HttpResponseStatus.UNAUTHORIZED, "this dispatcher requires its token (docs/security.md)");
            r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, HttpAuth.CHALLENGE);
            send(ctx, req, r, false);
            return;
        }
        switch (path) {
            case "/" -> send(ctx, req, html(HttpResponseStatus.OK, Assets.INDEX), true);
            case "/events" -> stream(ctx, req);
            case "/status" -> status(ctx, req);
            case "/metrics" -> {
                FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                        Unpooled.wrappedBuffer(monitor.metrics().scrape()));
                r.headers().set(HttpHeaderNames.CONTENT_TYPE, monitor.metrics().contentType());
                send(ctx, req, r, true);
            }
            default -> {
                Assets.Asset a = Assets.get(path);
                if (a == null) {
                    send(ctx, req, text(HttpResponseStatus.NOT_FOUND, "no such page: " + path), true);
                } else {
                    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                            Unpooled.wrappedBuffer(a.bytes()));
                    r.headers().set(HttpHeaderNames.CONTENT_TYPE, a.contentType());
                    send(ctx, req, r, true);
                }
            }
        }
    }

    /** The one authentication check: a token in the headers, else the session cookie. */
    private boolean authenticated(FullHttpRequest req, String from) {
        if (!admission.authenticationRequired()) {
            return true;
        }
        String presented = HttpAuth.presented(req.headers().get(HttpAuth.AUTHORIZATION),
                req.headers().get(HttpAuth.TOKEN_HEADER));
        if (presented != null) {
            return admission.authenticate(from, presented) != null;
        }
        return admission.authenticateSession(from, sessionCookie(req.headers())) != null;
    }

    private static String sessionCookie(HttpHeaders headers) {
        String header = headers.get(HttpHeaderNames.COOKIE);
        if (header == null || header.length() > 4096) {
            return null;
        }
        for (Cookie c : ServerCookieDecoder.STRICT.decode(header)) {
            if (c.name().equals(COOKIE)) {
                return c.value();
            }
        }
        return null;
    }

    /** {@code /?token=…}: the right token gets the session cookie and a redirect to the bare page. */
    private void login(ChannelHandlerContext ctx, FullHttpRequest req, String from, String token) {
        if (admission.authenticationRequired() && admission.authenticate(from, token) == null) {
            FullHttpResponse r = html(HttpResponseStatus.UNAUTHORIZED, Assets.LOGIN);
            r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, HttpAuth.CHALLENGE);
            send(ctx, req, r, false);
            return;
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.SEE_OTHER);
        r.headers().set(HttpHeaderNames.LOCATION, "/");
        DefaultCookie c = new DefaultCookie(COOKIE, admission.sessionCookie());
        c.setPath("/");
        c.setHttpOnly(true);
        c.setSecure(tls);
        c.setSameSite(SameSite.Strict);
        r.headers().set(HttpHeaderNames.SET_COOKIE, ServerCookieEncoder.STRICT.encode(c));
        send(ctx, req, r, true);
    }

    private void status(ChannelHandlerContext ctx, FullHttpRequest req) {
        MonitorTransport.Live live = monitor.live();
        if (live == null) {
            send(ctx, req, text(HttpResponseStatus.SERVICE_UNAVAILABLE, "no status sampled yet; retry in a second"), true);
            return;
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                Unpooled.copiedBuffer(live.json(), StandardCharsets.UTF_8));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json; charset=utf-8");
        send(ctx, req, r, true);
    }

    /** {@code /events}: server-sent events, one status document a second, until the browser leaves. */
    private void stream(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (!monitor.watch(ctx.channel())) {
            send(ctx, req, text(HttpResponseStatus.SERVICE_UNAVAILABLE, "too many dashboards are open; close one"),
                    false);
            return;
        }
        deadline.off();
        ctx.pipeline().remove(MonitorTransport.IDLE);
        HttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        r.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        secure(r.headers());
        ctx.write(r);
        MonitorTransport.Live live = monitor.live();
        String first = "retry: 2000\n\n" + (live == null ? "" : "data: " + live.json() + "\n\n");
        ctx.writeAndFlush(new DefaultHttpContent(
                Unpooled.copiedBuffer(first, StandardCharsets.UTF_8)));
    }

    private static void secure(HttpHeaders h) {
        h.set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        h.set("X-Content-Type-Options", "nosniff");
        h.set("X-Frame-Options", "DENY");
        h.set("Referrer-Policy", "no-referrer");
        h.set("Content-Security-Policy", CSP);
    }

    private static FullHttpResponse text(HttpResponseStatus status, String body) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body + "\n", StandardCharsets.UTF_8));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
        return r;
    }

    private static FullHttpResponse html(HttpResponseStatus status, byte[] body) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/html; charset=utf-8");
        return r;
    }

    private static void send(ChannelHandlerContext ctx, FullHttpRequest req, FullHttpResponse r, boolean keepAlive) {
        secure(r.headers());
        HttpUtil.setContentLength(r, r.content().readableBytes());
        if (req.method() == HttpMethod.HEAD) {
            r.content().clear();
        }
        boolean keep = keepAlive && HttpUtil.isKeepAlive(req);
        HttpUtil.setKeepAlive(r, keep);
        if (keep) {
            ctx.writeAndFlush(r);
        } else {
            ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            ctx.close(); // idle between requests
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
