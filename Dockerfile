# loopctl's image (docs/GATEWAY.md §9.5): a static binary on scratch, CA
# certificates, user 65532, no shell. Build it with
#   docker build -t loopctl .          (or: buildah bud -t loopctl .)
# and, where the golang image cannot be pulled, from a binary built on the
# host (CGO_ENABLED=0 go build -o loopctl ./cmd/loopctl, next to a
# ca-certificates.crt in the build context):
#   buildah bud --build-arg BINARY=host -t loopctl .
ARG BINARY=build

# The binary, built from source.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/loopctl ./cmd/loopctl \
 && cp /etc/ssl/certs/ca-certificates.crt /out/

# The binary, built on the host (--build-arg BINARY=host).
FROM scratch AS host
COPY loopctl ca-certificates.crt /out/

FROM ${BINARY} AS binary

# The image.
FROM scratch
COPY --from=binary /out/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=binary /out/loopctl /loopctl
USER 65532:65532
EXPOSE 4000
ENTRYPOINT ["/loopctl"]
CMD ["serve", "--config", "/etc/loopctl/loopctl.yaml", "--listen", "0.0.0.0:4000"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s CMD ["/loopctl", "healthcheck"]
