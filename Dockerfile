# loopctl's image (docs/GATEWAY.md §9.5): a static binary on scratch, CA
# certificates, user 65532, no shell. Build it from source with
#   buildah bud -t loopctl .           (or: docker build -t loopctl . / podman build -t loopctl .)
# naming the version and commit `loopctl version` reports (the build
# context holds no .git, so Go cannot stamp them itself):
#   buildah bud --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse HEAD) -t loopctl .
# and, where the golang image cannot be pulled, from a binary built on the
# host with the same flags, next to a ca-certificates.crt in the build context:
#   CGO_ENABLED=0 go build -trimpath -ldflags="-s -w \
#     -X github.com/loopctl/loopctl-go/cmd/loopctl/internal/cli.commit=$(git rev-parse HEAD)" \
#     -o loopctl ./cmd/loopctl
#   buildah bud --target host -t loopctl .   (docker/podman build --target host -t loopctl .)
# Each stage is chosen by --target or by being last, never by an ARG in
# FROM: buildah 1.28 (Debian's) takes `FROM ${ARG}` for an image name, not
# a stage. The two image stages are the same but for where the binary
# comes from (the test holds them equal).

# The image, from a binary built on the host (--target host).
FROM scratch AS host
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY loopctl /loopctl
USER 65532:65532
EXPOSE 4000
ENTRYPOINT ["/loopctl"]
CMD ["serve", "--config", "/etc/loopctl/loopctl.yaml", "--listen", "0.0.0.0:4000"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s CMD ["/loopctl", "healthcheck"]

# The binary, built from source.
FROM docker.io/library/golang:1.26 AS build
ARG VERSION=""
ARG COMMIT=""
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags="-s -w -X github.com/loopctl/loopctl-go/cmd/loopctl/internal/cli.version=${VERSION} -X github.com/loopctl/loopctl-go/cmd/loopctl/internal/cli.commit=${COMMIT}" \
      -o /out/loopctl ./cmd/loopctl \
 && cp /etc/ssl/certs/ca-certificates.crt /out/

# The image, from the binary built from source (the default: the last stage).
FROM scratch
COPY --from=build /out/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/loopctl /loopctl
USER 65532:65532
EXPOSE 4000
ENTRYPOINT ["/loopctl"]
CMD ["serve", "--config", "/etc/loopctl/loopctl.yaml", "--listen", "0.0.0.0:4000"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s CMD ["/loopctl", "healthcheck"]
