module github.com/robothub/robothub

go 1.26.8
