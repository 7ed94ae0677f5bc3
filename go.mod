module github.com/loopctl/loopctl-go

go 1.26
