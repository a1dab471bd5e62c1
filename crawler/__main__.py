from crawler.cli.commands import main

main()
