' rokuprof sample: the entry point. Shows HomeScene and runs until the scene is closed.
sub Main(args as Dynamic)
    screen = CreateObject("roSGScreen")
    port = CreateObject("roMessagePort")
    screen.setMessagePort(port)
    scene = screen.CreateScene("HomeScene")
    screen.show()
    if args <> invalid and args.contentId <> invalid
        scene.deepLink = { contentId: args.contentId, mediaType: args.mediaType }
    end if
    while true
        msg = wait(0, port)
        if type(msg) = "roSGScreenEvent" and msg.isScreenClosed() then return
    end while
end sub
