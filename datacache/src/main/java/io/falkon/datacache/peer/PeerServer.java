package io.falkon.datacache.peer;

import io.falkon.datacache.CacheStore;
import io.falkon.datacache.Lease;
import io.falkon.datacache.fetch.PeerFetcher;
import io.falkon.protocol.LogSafe;
import io.falkon.protocol.ObjectId;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.falkon.protocol.auth.HttpAuth;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarConstants;
import io.falkon.protocol.auth.Token;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Serves this executor's cached objects to its peers over HTTP: {@code GET /objects?id=ID} answers
 * 200 with the object's bytes (sent from the file with zero copy, the object pinned meanwhile) or
 * 404 when it is not (or no longer) cached. Objects unpacked for a task are not served; peers
 * fetch the stored form and unpack it themselves.
 *
 * <p>{@code POST /objects} with the ids of many objects in its body, as a form ({@code id=ID&id=ID...},
 * each id percent-encoded, so that no id can be read as two; at most {@value #MAX_BATCH} ids,
 * {@value #MAX_BATCH_BYTES} bytes, every one a canonical {@link ObjectId} or the request is refused
 * whole), answers with one tar stream of those it
 * holds ({@link #BATCH_TYPE}): an entry per object, named {@code INDEX.SHA256} (the id's place in the
 * request, and what this cache recorded of it), in request order; ids it does not hold are left out.
 * A gather task's inputs that one peer holds thus come in one request (seed 004's collective gather)
 * instead of one each. Each object is pinned while it is sent and goes from its file with zero copy.
 *
 * <p>Like every Falkon listener it requires the deployment's token ({@code Authorization: Bearer}
 * or {@code X-Falkon-Token}; 401 otherwise), limits its connections ({@value #MAX_CONNECTIONS}) and
 * closes a connection idle for {@value #IDLE_SECONDS} s. The data is not encrypted: integrity is
 * checked by the fetching peer (size, and the checksum the object's holder recorded).
 */
public final class PeerServer implements AutoCloseable {
    static final int MAX_CONNECTIONS = 256;
    /** Most ids one batch request may name, and most bytes its body may have. */
    public static final int MAX_BATCH = 10_000;
    public static final int MAX_BATCH_BYTES = 1 << 20;
    /** The content type of a batch answer. */
    public static final String BATCH_TYPE = "application/x-tar";
    static final int IDLE_SECONDS = 30;

    private final EventLoopGroup group;
    private final Channel server;

    private PeerServer(EventLoopGroup group, Channel server) {
        this.group = group;
        this.server = server;
    }

    /** Listens on {@code host:port} (port 0: any free one), requiring {@code token}. */
    public static PeerServer start(CacheStore cache, String host, int port, Token token) throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("falkon-peer", true),
                NioIoHandler.newFactory());
        AtomicInteger open = new AtomicInteger();
        try {
            Channel ch = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel c) {
                            if (open.incrementAndGet() > MAX_CONNECTIONS) {
                                open.decrementAndGet();
                                c.close();
                                return;
                            }
                            c.closeFuture().addListener(f -> open.decrementAndGet());
                            c.pipeline().addLast(new HttpServerCodec(4096, 8192, 8192), new HttpObjectAggregator(MAX_BATCH_BYTES),
                                    new IdleStateHandler(IDLE_SECONDS, 0, 0), new Handler(cache, token));
                        }
                    }).bind(new InetSocketAddress(host, port)).sync().channel();
            return new PeerServer(group, ch);
        } catch (Exception e) { // sync() rethrows the bind's BindException, a checked exception, undeclared
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            if (e instanceof InterruptedException ie) {
                throw ie;
            }
            throw new IllegalStateException("cannot serve the cache on " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** Stops serving. Idempotent. */
    @Override
    public void close() {
        if (group.isShuttingDown()) {
            return;
        }
        server.close().awaitUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
    }

    private static final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final CacheStore cache;
        private final Token token;

        Handler(CacheStore cache, Token token) {
            this.cache = cache;
            this.token = token;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) throws IOException {
            if (!req.decoderResult().isSuccess()) {
                reply(ctx, req, HttpResponseStatus.BAD_REQUEST, "malformed request\n");
                return;
            }
            if (!token.admits(HttpAuth.presented(req.headers().get(HttpAuth.AUTHORIZATION),
                    req.headers().get(HttpAuth.TOKEN_HEADER)))) {
                reply(ctx, req, HttpResponseStatus.UNAUTHORIZED, "present the deployment's token "
                        + "(Authorization: Bearer TOKEN)\n");
                return;
            }
            QueryStringDecoder q = new QueryStringDecoder(req.uri());
            if (req.method() == HttpMethod.POST && q.path().equals("/objects")) {
                batch(ctx, req);
                return;
            }
            List<String> ids = q.parameters().get("id");
            if (req.method() != HttpMethod.GET || !q.path().equals("/objects") || ids == null || ids.size() != 1
                    || !ObjectId.valid(ids.get(0))) {
                reply(ctx, req, HttpResponseStatus.BAD_REQUEST, "expected GET /objects?id=OBJECT\n");
                return;
            }
            Lease lease = cache.peek(ids.get(0));
            if (lease == null) {
                reply(ctx, req, HttpResponseStatus.NOT_FOUND, "not cached here: " + LogSafe.text(ids.get(0)) + "\n");
                return;
            }
            long size;
            try {
                size = Files.size(lease.path());
            } catch (IOException e) {
                lease.close();
                throw e;
            }
            DefaultHttpResponse resp = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            HttpUtil.setContentLength(resp, size);
            resp.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/octet-stream");
            // what this cache recorded when the object arrived: the receiver checks the bytes against it,
            // so a copy changed here since (by anyone) is refused rather than spread
            resp.headers().set(PeerFetcher.SHA256_HEADER, lease.sha256());
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            HttpUtil.setKeepAlive(resp, keepAlive);
            ctx.write(resp);
            ctx.write(new DefaultFileRegion(lease.path().toFile(), 0, size));
            var done = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            done.addListener(f -> lease.close());
            if (!keepAlive) {
                done.addListener(ChannelFutureListener.CLOSE);
            }
        }

        /** POST /objects: the objects it holds of those named, as one tar stream. */
        private void batch(ChannelHandlerContext ctx, FullHttpRequest req) throws IOException {
            String body = req.content().toString(StandardCharsets.US_ASCII); // a form is ASCII: the ids are encoded
            List<String> ids;
            try {
                ids = body.isEmpty() ? List.of()
                        : new QueryStringDecoder(body, StandardCharsets.UTF_8, false, MAX_BATCH + 1).parameters()
                        .getOrDefault("id", List.of());
            } catch (IllegalArgumentException e) { // a broken %-escape
                ids = List.of();
            }
            if (ids.isEmpty() || ids.size() > MAX_BATCH || !ids.stream().allMatch(ObjectId::valid)
                    || formFields(body) != ids.size()) {
                reply(ctx, req, HttpResponseStatus.BAD_REQUEST, "expected POST /objects with id=OBJECT&id=OBJECT..., 1.."
                        + MAX_BATCH + " canonical object ids, percent-encoded\n");
                return;
            }
            List<Lease> leases = new ArrayList<>();
            List<byte[]> headers = new ArrayList<>();
            long length = 2L * TarConstants.DEFAULT_RCDSIZE; // the two zero records that end the archive
            try {
                for (int i = 0; i < ids.size(); i++) {
                    Lease lease = cache.peek(ids.get(i));
                    if (lease == null) {
                        continue;
                    }
                    leases.add(lease);
                    long size = Files.size(lease.path());
                    TarArchiveEntry entry = new TarArchiveEntry(i + "." + lease.sha256(), true);
                    entry.setSize(size);
                    byte[] header = new byte[TarConstants.DEFAULT_RCDSIZE];
                    entry.writeEntryHeader(header);
                    headers.add(header);
                    length += header.length + size + padding(size);
                }
            } catch (IOException | RuntimeException e) {
                leases.forEach(Lease::close);
                throw e;
            }
            DefaultHttpResponse resp = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            HttpUtil.setContentLength(resp, length);
            resp.headers().set(HttpHeaderNames.CONTENT_TYPE, BATCH_TYPE);
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            HttpUtil.setKeepAlive(resp, keepAlive);
            ctx.write(resp);
            for (int k = 0; k < leases.size(); k++) {
                Lease lease = leases.get(k);
                long size = Files.size(lease.path());
                ctx.write(Unpooled.wrappedBuffer(headers.get(k)));
                ctx.write(new DefaultFileRegion(lease.path().toFile(), 0, size)).addListener(f -> lease.close());
                if (padding(size) > 0) {
                    ctx.write(Unpooled.wrappedBuffer(new byte[(int) padding(size)]));
                }
            }
            ctx.write(Unpooled.wrappedBuffer(new byte[2 * TarConstants.DEFAULT_RCDSIZE]));
            var done = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            if (!keepAlive) {
                done.addListener(ChannelFutureListener.CLOSE);
            }
        }

        /** How many fields the form has: one per '&'-separated part (a field that is not "id" is refused). */
        private static int formFields(String body) {
            int n = 1;
            for (int i = 0; i < body.length(); i++) {
                n += body.charAt(i) == '&' || body.charAt(i) == ';' ? 1 : 0;
            }
            return n;
        }

        private static long padding(long size) {
            long r = size % TarConstants.DEFAULT_RCDSIZE;
            return r == 0 ? 0 : TarConstants.DEFAULT_RCDSIZE - r;
        }

        private static void reply(ChannelHandlerContext ctx, FullHttpRequest req, HttpResponseStatus status,
                                  String text) {
            DefaultFullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                    Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
            resp.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
            if (status == HttpResponseStatus.UNAUTHORIZED) {
                resp.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, HttpAuth.CHALLENGE);
            }
            HttpUtil.setContentLength(resp, resp.content().readableBytes());
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            HttpUtil.setKeepAlive(resp, keepAlive);
            var f = ctx.writeAndFlush(resp);
            if (!keepAlive) {
                f.addListener(ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof IdleStateEvent) {
                ctx.close();
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
